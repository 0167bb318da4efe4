package api

import (
	"bufio"
	"io"
)

// listWriteBuffer is the one buffer a list answer is written through: a
// list of any length is encoded host by host into it, so the memory an
// answer takes does not grow with the list.
const listWriteBuffer = 32 << 10

// keptListBuffers is how many list write buffers are kept between
// answers. A paged list asks for a page after another, so without them
// every page of 500 hosts allocated a new 32 KiB buffer (20 per list of
// 10,000 hosts, more than the summaries' own encoding allocates); more
// pages at once than kept get a new buffer, dropped after the answer.
const keptListBuffers = 4

// maxKeptItemBuffer is the largest item buffer kept with a write buffer:
// one host's document is a few KiB; a rare larger one is not kept.
const maxKeptItemBuffer = 64 << 10

// listBuffer is a list answer's write buffer and the buffer one item is
// encoded into before it is written.
type listBuffer struct {
	*bufio.Writer
	item []byte
}

var listBuffers = make(chan *listBuffer, keptListBuffers)

// getListBuffer returns a list write buffer writing to w.
func getListBuffer(w io.Writer) *listBuffer {
	select {
	case lb := <-listBuffers:
		lb.Reset(w)
		return lb
	default:
		return &listBuffer{Writer: bufio.NewWriterSize(w, listWriteBuffer), item: make([]byte, 0, 4<<10)}
	}
}

// putListBuffer keeps lb for the next answer (or drops it when enough are
// kept). It no longer refers to the answer's writer.
func putListBuffer(lb *listBuffer) {
	lb.Reset(nil)
	if cap(lb.item) > maxKeptItemBuffer {
		lb.item = make([]byte, 0, 4<<10)
	}
	select {
	case listBuffers <- lb:
	default:
	}
}
