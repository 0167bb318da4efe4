package fsm

import (
	"encoding/json"
	"sync"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// Command body versions (the second byte of every entry).
const (
	// bodyJSON (v1) is encoding/json of the command struct. Every command
	// has it; commands without a binary codec are still written with it,
	// and entries written before v2 existed are all v1.
	bodyJSON = 1
	// BodyBinary (v2) is MessagePack of the same struct, field names from
	// the json tags (hashicorp/go-msgpack, the codec hashicorp/raft itself
	// uses on the wire). It is written for the hot-path commands
	// (commandTable's binary entries): a status report with hardware details is 32 % smaller
	// and decodes in half of JSON's time (BenchmarkCommandBody).
	BodyBinary = 2
	// putHostDataVersion (v3, CmdPutHost only) is the MessagePack body of a
	// host that names config drive records (userData, networkData,
	// metaData, preprovisioningNetworkData) or carries an operation
	// history from another tier. Any other host is still written as v2, so binaries from before those fields apply it; one
	// naming any is v3, which such a binary refuses (it stops, fsm_stop.go)
	// instead of dropping the fields, and which the gate (coordinator/gate.go) writes
	// only once every voter applies it.
	putHostDataVersion = 3
	// putHostDayTwoVersion (v4, CmdPutHost only) is the MessagePack body
	// of a host with a day-two spec (bios, firmware, raid, updatePolicy):
	// a v3 binary would drop those fields. Any other host is written as
	// before (v2 or v3).
	putHostDayTwoVersion = 4
	// deleteHostFencedVersion is a DeleteHost that a BMC task recorded
	// on the host refuses unless forced (DeleteHostCmd.TaskFence).
	deleteHostFencedVersion = 2
)

// msgpackHandle is shared (go-msgpack handles are safe for concurrent use
// once configured). Times are MessagePack timestamps (WriteExt).
var msgpackHandle = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{WriteExt: true}
	h.MaxDepth = 32 // commands nest 4 deep; bounds what a corrupt entry can make the decoder do
	h.RawToString = true
	return h
}()

// encodeBody returns the command's body version and its body appended to
// an entry of head bytes reserved in front (head bytes, then the body, in
// one exactly sized allocation).
func encodeBody(c Command, head int) (byte, []byte, error) {
	if !commandTable[c.Type()].binary {
		b, err := json.Marshal(c)
		if err != nil {
			return 0, nil, err
		}
		return bodyJSON, append(make([]byte, head, head+len(b)), b...), nil
	}
	s := encoders.Get().(*encoder)
	defer s.put()
	s.enc.ResetBytes(&s.buf)
	if err := s.enc.Encode(c); err != nil {
		return 0, nil, err
	}
	return BodyBinary, append(make([]byte, head, head+len(s.buf)), s.buf...), nil
}

// encoder is a MessagePack encoder and its scratch buffer, reused from
// entry to entry: a body grows there (doubling), then is copied once into
// its entry, instead of every entry growing its own buffer.
type encoder struct {
	buf []byte
	enc *codec.Encoder
}

// maxScratch is the largest scratch buffer kept for reuse (a batch of
// rack reports can be megabytes; such a buffer is left to the collector).
const maxScratch = 256 << 10

var encoders = sync.Pool{New: func() any {
	s := &encoder{buf: make([]byte, 0, 4096)}
	s.enc = codec.NewEncoderBytes(&s.buf, msgpackHandle)
	return s
}}

func (s *encoder) put() {
	if cap(s.buf) > maxScratch {
		return
	}
	s.buf = s.buf[:0]
	encoders.Put(s)
}

// decodeBody decodes a body into a T: MessagePack for a binary-bodied type
// (binary) at version 2 or later, otherwise JSON (any JSON layout version
// up to the type's newest; newer fields are simply absent from older
// bodies). Decode has checked ver against the type's newest version.
func decodeBody[T Command](binary bool, ver byte, body []byte) (Command, error) {
	var v T
	if binary && ver >= BodyBinary {
		if err := codec.NewDecoderBytes(body, msgpackHandle).Decode(&v); err != nil {
			return nil, err
		}
		return v, nil
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	return v, nil
}
