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

var listBuffers = make(chan *bufio.Writer, keptListBuffers)

// getListBuffer returns a list write buffer writing to w.
func getListBuffer(w io.Writer) *bufio.Writer {
	select {
	case bw := <-listBuffers:
		bw.Reset(w)
		return bw
	default:
		return bufio.NewWriterSize(w, listWriteBuffer)
	}
}

// putListBuffer keeps bw for the next answer (or drops it when enough are
// kept). It no longer refers to the answer's writer.
func putListBuffer(bw *bufio.Writer) {
	bw.Reset(nil)
	select {
	case listBuffers <- bw:
	default:
	}
}
