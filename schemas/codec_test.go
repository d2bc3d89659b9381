package schemas

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/hamba/avro/v2"
)

func newTestCodec(t testing.TB, opts ...CodecOption) *Codec {
	t.Helper()
	c, err := NewCodec(opts...)
	if err != nil {
		t.Fatalf("NewCodec: %v", err)
	}
	return c
}

// crc64Avro is the CRC-64-AVRO fingerprint as the Avro specification defines it, written
// independently of hamba/avro so the header format is checked against the spec.
func crc64Avro(data []byte) uint64 {
	const empty = 0xc15d213aa4d7a795
	var table [256]uint64
	for i := range table {
		fp := uint64(i)
		for range 8 {
			fp = (fp >> 1) ^ (empty & -(fp & 1))
		}
		table[i] = fp
	}
	fp := uint64(empty)
	for _, b := range data {
		fp = (fp >> 8) ^ table[byte(fp)^b]
	}
	return fp
}

func TestCRC64AvroKnownVector(t *testing.T) {
	// From the Avro reference implementation's fingerprint tests.
	if got := crc64Avro([]byte(`"null"`)); got != 0x63dd24e7cc258f8a {
		t.Fatalf(`crc64Avro("null") = %#x, want 0x63dd24e7cc258f8a`, got)
	}
}

func TestRoundTripSingleObject(t *testing.T) {
	c := newTestCodec(t)
	for _, ti := range Topics() {
		t.Run(ti.Name, func(t *testing.T) {
			want := sample(ti.Name)
			data, err := c.Encode(ti.Name, want)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			got := ti.New()
			if err := c.Decode(ti.Name, data, got); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestSingleObjectHeader(t *testing.T) {
	c := newTestCodec(t)
	for _, ti := range Topics() {
		data, err := c.Encode(ti.Name, sample(ti.Name))
		if err != nil {
			t.Fatalf("%s: Encode: %v", ti.Name, err)
		}
		if len(data) < soeHeaderLen || data[0] != 0xC3 || data[1] != 0x01 {
			t.Fatalf("%s: missing single-object magic: % x", ti.Name, data[:min(len(data), 10)])
		}
		want := crc64Avro([]byte(ti.Schema.String()))
		if got := binary.LittleEndian.Uint64(data[2:10]); got != want {
			t.Errorf("%s: fingerprint %016x, want %016x", ti.Name, got, want)
		}
	}
}

func TestEncodeValueAndPointerAgree(t *testing.T) {
	c := newTestCodec(t)
	p := sampleSessionState()
	fromPtr, err := c.Encode(TopicSessionState, p)
	if err != nil {
		t.Fatal(err)
	}
	fromVal, err := c.Encode(TopicSessionState, *p)
	if err != nil {
		t.Fatal(err)
	}
	// Avro maps follow Go's map order, so compare what the encodings hold.
	for name, data := range map[string][]byte{"pointer": fromPtr, "value": fromVal} {
		got := new(SessionState)
		if err := c.Decode(TopicSessionState, data, got); err != nil {
			t.Fatalf("Decode of encoded %s: %v", name, err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Fatalf("encoding a %s loses data", name)
		}
	}
}

func TestEncodeRejectsWrongInput(t *testing.T) {
	c := newTestCodec(t)
	cases := []struct {
		name  string
		topic string
		v     any
		want  error
	}{
		{"unknown topic", "ekyc.nope.v1", sampleSessionState(), ErrUnknownTopic},
		{"other topic's type", TopicSessionState, &Decision{}, ErrWrongType},
		{"nil pointer", TopicSessionState, (*SessionState)(nil), ErrWrongType},
		{"nil", TopicSessionState, nil, ErrWrongType},
		{"map", TopicSessionState, map[string]any{"version": 1}, ErrWrongType},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Encode(tc.topic, tc.v)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Encode error = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDecodeRejectsBadInput(t *testing.T) {
	small := newTestCodec(t, WithMaxSize(64))
	c := newTestCodec(t)
	valid, err := c.Encode(TopicSessionState, sampleSessionState())
	if err != nil {
		t.Fatal(err)
	}
	decision, err := c.Encode(TopicDecisions, sample(TopicDecisions))
	if err != nil {
		t.Fatal(err)
	}
	unknownFP := append([]byte{0xC3, 0x01}, 1, 2, 3, 4, 5, 6, 7, 8, 0)

	cases := []struct {
		name  string
		codec *Codec
		data  []byte
		want  error
	}{
		{"nil (tombstone)", c, nil, ErrEmpty},
		{"empty", c, []byte{}, ErrEmpty},
		{"json", c, []byte(`{"version":1}`), ErrUnknownFormat},
		{"truncated single-object header", c, valid[:6], ErrMalformed},
		{"truncated body", c, valid[:len(valid)/2], ErrMalformed},
		{"header only", c, valid[:soeHeaderLen], ErrMalformed},
		{"trailing bytes", c, append(append([]byte{}, valid...), 0), ErrMalformed},
		{"unknown fingerprint", c, unknownFP, ErrUnknownFingerprint},
		{"confluent frame without registry", c, []byte{0, 0, 0, 0, 7, 2, 'a'}, ErrNoRegistry},
		{"truncated confluent header", c, []byte{0, 0, 1}, ErrMalformed},
		{"too large", small, valid, ErrTooLarge},
		{"another topic's event", c, decision, ErrIncompatible},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := sampleSessionState()
			err := tc.codec.Decode(TopicSessionState, tc.data, got)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode error = %v, want %v", err, tc.want)
			}
			if !reflect.DeepEqual(got, sampleSessionState()) {
				t.Fatal("Decode wrote to v although it failed")
			}
		})
	}

	t.Run("unknown fingerprint is named", func(t *testing.T) {
		err := c.Decode(TopicSessionState, unknownFP, new(SessionState))
		if err == nil || !strings.Contains(err.Error(), "0807060504030201") {
			t.Fatalf("error %v does not name fingerprint 0807060504030201", err)
		}
	})
	t.Run("unknown topic", func(t *testing.T) {
		if err := c.Decode("nope", valid, new(SessionState)); !errors.Is(err, ErrUnknownTopic) {
			t.Fatalf("Decode error = %v, want ErrUnknownTopic", err)
		}
	})
	for name, v := range map[string]any{
		"non-pointer": SessionState{}, "nil pointer": (*SessionState)(nil), "other type": new(Decision), "nil": nil,
	} {
		t.Run("target "+name, func(t *testing.T) {
			if err := c.Decode(TopicSessionState, valid, v); !errors.Is(err, ErrWrongType) {
				t.Fatalf("Decode error = %v, want ErrWrongType", err)
			}
		})
	}
}

// zigzag appends the Avro long encoding of v.
func zigzag(b []byte, v int64) []byte {
	return binary.AppendUvarint(b, uint64((v<<1)^(v>>63)))
}

// fraudWithChecks returns the single-object encoding of a FraudAssessed whose checks array
// is replaced by the given raw bytes.
func fraudWithChecks(t *testing.T, c *Codec, rawChecks []byte) []byte {
	t.Helper()
	data, err := c.Encode(TopicFraud, &FraudAssessed{Envelope: sampleEnvelope("fraud")})
	if err != nil {
		t.Fatal(err)
	}
	// An empty array is the single terminating block count 0: replace it.
	if data[len(data)-1] != 0 {
		t.Fatalf("unexpected encoding tail % x", data[len(data)-4:])
	}
	return append(data[:len(data)-1:len(data)-1], rawChecks...)
}

func TestDecodeBoundsAllocations(t *testing.T) {
	c := newTestCodec(t)
	cases := map[string][]byte{
		"huge array count":          zigzag(nil, 1<<40),
		"max int64 array count":     zigzag(nil, 1<<62),
		"min int64 array count":     zigzag(nil, -1<<63),
		"negative block, huge size": zigzag(zigzag(nil, -(1<<40)), 1<<40),
		"count beyond payload":      zigzag(nil, 1000),
		"huge string length":        append(zigzag(nil, 1), zigzag(nil, 1<<40)...),
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			data := fraudWithChecks(t, c, raw)
			if err := c.Decode(TopicFraud, data, new(FraudAssessed)); !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode error = %v, want ErrMalformed", err)
			}
		})
	}

	t.Run("max items", func(t *testing.T) {
		limited := newTestCodec(t, WithMaxItems(2))
		v := sample(TopicFraud).(*FraudAssessed)
		v.Checks = append(v.Checks, sampleCheck("fraud.third", "fraud"))
		data, err := limited.Encode(TopicFraud, v)
		if err != nil {
			t.Fatal(err)
		}
		if err := limited.Decode(TopicFraud, data, new(FraudAssessed)); !errors.Is(err, ErrMalformed) {
			t.Fatalf("Decode of 3 checks with max items 2: error = %v, want ErrMalformed", err)
		}
		if err := c.Decode(TopicFraud, data, new(FraudAssessed)); err != nil {
			t.Fatalf("Decode with default limits: %v", err)
		}
	})

	t.Run("max size bounds strings", func(t *testing.T) {
		limited := newTestCodec(t, WithMaxSize(1024))
		v := sample(TopicFraud).(*FraudAssessed)
		v.Envelope.Producer = strings.Repeat("p", 900)
		data, err := limited.Encode(TopicFraud, v)
		if err == nil {
			err = limited.Decode(TopicFraud, data, new(FraudAssessed))
		}
		if err == nil {
			t.Fatal("a 900-byte string plus the rest of the event fit into max size 1024")
		}
	})
}

// olderFraudSchema is a plausible earlier version of fraud_assessed.avsc: its Check has
// neither capture_id nor detail.
const olderFraudSchema = `{"type":"record","name":"FraudAssessed","namespace":"dev.idstream.ekyc","fields":[
 {"name":"envelope","type":{"type":"record","name":"Envelope","namespace":"dev.idstream.common","fields":[
  {"name":"event_id","type":"string"},{"name":"session_id","type":"string"},{"name":"tenant_id","type":"string"},
  {"name":"occurred_at","type":{"type":"long","logicalType":"timestamp-millis"}},{"name":"producer","type":"string"}]}},
 {"name":"checks","type":{"type":"array","items":{"type":"record","name":"Check","fields":[
  {"name":"name","type":"string"},{"name":"status","type":"string"},
  {"name":"score","type":["null","double"],"default":null},{"name":"threshold","type":["null","double"],"default":null},
  {"name":"reason_code","type":["null","string"],"default":null},{"name":"model_version","type":["null","string"],"default":null},
  {"name":"source","type":"string"}]}}}]}`

// encodeWith returns the single-object encoding of v written with schema text.
func encodeWith(t *testing.T, schemaText string, v any) []byte {
	t.Helper()
	s, err := ParseSchema([]byte(schemaText))
	if err != nil {
		t.Fatal(err)
	}
	body, err := avro.Config{}.Freeze().Marshal(s, v)
	if err != nil {
		t.Fatal(err)
	}
	header := []byte{0xC3, 0x01}
	header = binary.LittleEndian.AppendUint64(header, crc64Avro([]byte(s.String())))
	return append(header, body...)
}

func TestDecodeResolvesOlderWriter(t *testing.T) {
	v := sample(TopicFraud).(*FraudAssessed)
	data := encodeWith(t, olderFraudSchema, v)

	if err := newTestCodec(t).Decode(TopicFraud, data, new(FraudAssessed)); !errors.Is(err, ErrUnknownFingerprint) {
		t.Fatalf("codec without the older schema: error = %v, want ErrUnknownFingerprint", err)
	}

	c := newTestCodec(t, WithWriterSchemas(olderFraudSchema))
	got := new(FraudAssessed)
	if err := c.Decode(TopicFraud, data, got); err != nil {
		t.Fatalf("Decode of older writer: %v", err)
	}
	want := sample(TopicFraud).(*FraudAssessed)
	for i := range want.Checks {
		want.Checks[i].CaptureID, want.Checks[i].Detail = nil, nil // absent in the writer: defaults
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("resolved decode differs:\n got %+v\nwant %+v", got, want)
	}
}

func TestNewCodecRejectsBadOptions(t *testing.T) {
	for name, opt := range map[string]CodecOption{
		"max size":         WithMaxSize(0),
		"max items":        WithMaxItems(-1),
		"registry timeout": WithRegistryTimeout(0),
		"writer schema":    WithWriterSchemas(`{"type":"record"`),
	} {
		if _, err := NewCodec(opt); err == nil {
			t.Errorf("NewCodec with bad %s: no error", name)
		}
	}
}

func TestDecodeEnvelope(t *testing.T) {
	c := newTestCodec(t)
	for _, ti := range Topics() {
		v := sample(ti.Name)
		data, err := c.Encode(ti.Name, v)
		if err != nil {
			t.Fatal(err)
		}
		env, err := c.DecodeEnvelope(ti.Name, data)
		if err != nil {
			t.Fatalf("%s: DecodeEnvelope: %v", ti.Name, err)
		}
		want := reflect.ValueOf(v).Elem().FieldByName("Envelope").Interface().(Envelope)
		if env != want {
			t.Errorf("%s: envelope %+v, want %+v", ti.Name, env, want)
		}
	}
	if _, err := c.DecodeEnvelope(TopicDecisions, []byte{1, 2, 3}); !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("DecodeEnvelope of junk: error = %v, want ErrUnknownFormat", err)
	}
	if _, err := c.DecodeEnvelope("nope", []byte{1}); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("DecodeEnvelope of unknown topic: error = %v, want ErrUnknownTopic", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	reg := newFakeRegistry(t)
	for name, c := range map[string]*Codec{
		"single-object": newTestCodec(t),
		"registry":      newTestCodec(t, WithRegistry(reg.URL())),
	} {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					topic := Topics()[g%len(Topics())].Name
					for range 20 {
						want := sample(topic)
						data, err := c.Encode(topic, want)
						if err != nil {
							errs <- err
							return
						}
						got := reflect.New(reflect.TypeOf(want).Elem()).Interface()
						if err := c.Decode(topic, data, got); err != nil {
							errs <- err
							return
						}
						if !reflect.DeepEqual(got, want) {
							errs <- fmt.Errorf("%s: concurrent round trip differs", topic)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
