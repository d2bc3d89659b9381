package schemas

import "testing"

func BenchmarkEncodeSessionState(b *testing.B) {
	c := newTestCodec(b)
	v := sampleSessionState()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Encode(TopicSessionState, v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeSessionState(b *testing.B) {
	c := newTestCodec(b)
	data, err := c.Encode(TopicSessionState, sampleSessionState())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var v SessionState
		if err := c.Decode(TopicSessionState, data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeEnvelopeSessionState(b *testing.B) {
	c := newTestCodec(b)
	data, err := c.Encode(TopicSessionState, sampleSessionState())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.DecodeEnvelope(TopicSessionState, data); err != nil {
			b.Fatal(err)
		}
	}
}
