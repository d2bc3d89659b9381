package schemas

import "testing"

// FuzzDecode feeds arbitrary record values to every topic's decoder: it must return an error
// or a value that encodes again, never panic. Seeds: testdata/fuzz/FuzzDecode and a valid
// encoding of every topic.
func FuzzDecode(f *testing.F) {
	c := newTestCodec(f, WithWriterSchemas(olderFraudSchema))
	topics := Topics()
	for _, ti := range topics {
		data, err := c.Encode(ti.Name, sample(ti.Name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ti := range topics {
			v := ti.New()
			if err := c.Decode(ti.Name, data, v); err != nil {
				continue
			}
			again, err := c.Encode(ti.Name, v)
			if err != nil {
				t.Fatalf("%s: decoded value does not encode again: %v", ti.Name, err)
			}
			if err := c.Decode(ti.Name, again, ti.New()); err != nil {
				t.Fatalf("%s: re-encoded value does not decode: %v", ti.Name, err)
			}
			if _, err := c.DecodeEnvelope(ti.Name, data); err != nil {
				t.Fatalf("%s: Decode succeeded but DecodeEnvelope failed: %v", ti.Name, err)
			}
		}
	})
}
