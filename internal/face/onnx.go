package face

import (
	"errors"
	"fmt"
	"os"
)

// ErrBadModel reports a model file that is missing, implausibly sized, not an ONNX
// protobuf, or whose graph does not have the inputs and outputs the engine expects. It is
// returned before the file reaches OpenCV, whose parser aborts the process on bad input.
var ErrBadModel = errors.New("face: bad model file")

// Model file size bounds: an ONNX file smaller than minModelBytes cannot hold a useful
// network; one larger than maxModelBytes is not one of the small CPU models this engine runs.
const (
	minModelBytes = 1 << 10
	maxModelBytes = 512 << 20
)

// onnxValue is one graph input or output: its name and shape (a dimension is -1 when it is
// symbolic or unknown).
type onnxValue struct {
	Name  string
	Shape []int64
}

// onnxGraph is what the engine checks of a model before loading it.
type onnxGraph struct {
	IRVersion uint64
	Inputs    []onnxValue // graph inputs that are not initializers
	Outputs   []onnxValue
}

// readONNX reads and checks path as an ONNX ModelProto without any OpenCV code: the file must
// exist, have a plausible size, and parse as a protobuf whose top-level fields are those of
// ModelProto with a graph. It returns the file's bytes and the graph's inputs and outputs.
func readONNX(path string) ([]byte, onnxGraph, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, onnxGraph{}, fmt.Errorf("%w: %v", ErrBadModel, err)
	}
	if !st.Mode().IsRegular() {
		return nil, onnxGraph{}, fmt.Errorf("%w: %s is not a regular file", ErrBadModel, path)
	}
	if st.Size() < minModelBytes || st.Size() > maxModelBytes {
		return nil, onnxGraph{}, fmt.Errorf("%w: %s has %d bytes, want %d..%d",
			ErrBadModel, path, st.Size(), minModelBytes, maxModelBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, onnxGraph{}, fmt.Errorf("%w: %v", ErrBadModel, err)
	}
	g, err := parseONNX(data)
	if err != nil {
		return nil, onnxGraph{}, fmt.Errorf("%w: %s: %v", ErrBadModel, path, err)
	}
	return data, g, nil
}

// parseONNX walks the protobuf structure of an ONNX ModelProto: field 1 ir_version (varint),
// field 7 graph (GraphProto: 5 initializer, 11 input, 12 output as ValueInfoProto).
func parseONNX(data []byte) (onnxGraph, error) {
	var g onnxGraph
	if len(data) == 0 || data[0] != 0x08 { // ModelProto starts with ir_version, field 1 varint
		return g, errors.New("not an ONNX model (no ir_version field first)")
	}
	var graph []byte
	err := walkProto(data, func(field int, wire int, v uint64, b []byte) error {
		switch field {
		case 1:
			if wire != 0 {
				return errors.New("ir_version is not a varint")
			}
			g.IRVersion = v
		case 7:
			if wire != 2 {
				return errors.New("graph is not a message")
			}
			graph = b
		}
		return nil
	})
	if err != nil {
		return g, err
	}
	if g.IRVersion == 0 || g.IRVersion > 64 {
		return g, fmt.Errorf("implausible ir_version %d", g.IRVersion)
	}
	if graph == nil {
		return g, errors.New("no graph")
	}
	inits := map[string]bool{}
	var ins, outs [][]byte
	err = walkProto(graph, func(field int, wire int, _ uint64, b []byte) error {
		if wire != 2 {
			return nil
		}
		switch field {
		case 5: // initializer TensorProto: name is field 8
			_ = walkProto(b, func(f, w int, _ uint64, nb []byte) error {
				if f == 8 && w == 2 {
					inits[string(nb)] = true
				}
				return nil
			})
		case 11:
			ins = append(ins, b)
		case 12:
			outs = append(outs, b)
		}
		return nil
	})
	if err != nil {
		return g, fmt.Errorf("graph: %w", err)
	}
	for _, b := range ins {
		v, err := parseValueInfo(b)
		if err != nil {
			return g, fmt.Errorf("graph input: %w", err)
		}
		if !inits[v.Name] {
			g.Inputs = append(g.Inputs, v)
		}
	}
	for _, b := range outs {
		v, err := parseValueInfo(b)
		if err != nil {
			return g, fmt.Errorf("graph output: %w", err)
		}
		g.Outputs = append(g.Outputs, v)
	}
	if len(g.Inputs) == 0 || len(g.Outputs) == 0 {
		return g, errors.New("graph has no inputs or no outputs")
	}
	return g, nil
}

// parseValueInfo reads ValueInfoProto{1 name, 2 TypeProto{1 tensor_type{2 shape{1 dim{1
// dim_value, 2 dim_param}}}}}.
func parseValueInfo(b []byte) (onnxValue, error) {
	var v onnxValue
	err := walkProto(b, func(f, w int, _ uint64, nb []byte) error {
		if w != 2 {
			return nil
		}
		switch f {
		case 1:
			v.Name = string(nb)
		case 2:
			return walkProto(nb, func(f, w int, _ uint64, tb []byte) error {
				if f != 1 || w != 2 { // tensor_type
					return nil
				}
				return walkProto(tb, func(f, w int, _ uint64, sb []byte) error {
					if f != 2 || w != 2 { // shape
						return nil
					}
					return walkProto(sb, func(f, w int, _ uint64, db []byte) error {
						if f != 1 || w != 2 { // dim
							return nil
						}
						d := int64(-1)
						err := walkProto(db, func(f, w int, dv uint64, _ []byte) error {
							if f == 1 && w == 0 {
								d = int64(dv)
							}
							return nil
						})
						v.Shape = append(v.Shape, d)
						return err
					})
				})
			})
		}
		return nil
	})
	if v.Name == "" && err == nil {
		err = errors.New("value without a name")
	}
	return v, err
}

// walkProto calls fn for every field of the protobuf message b, in order. For varints v is
// the value; for length-delimited fields b is the payload. Fixed32/64 fields are skipped.
// It fails on any truncated or malformed field, so a walk that succeeds consumed b exactly.
func walkProto(b []byte, fn func(field, wire int, v uint64, payload []byte) error) error {
	for len(b) > 0 {
		key, n := uvarint(b)
		if n <= 0 {
			return errors.New("malformed protobuf key")
		}
		b = b[n:]
		field, wire := int(key>>3), int(key&7)
		if field <= 0 {
			return errors.New("protobuf field number 0")
		}
		switch wire {
		case 0:
			v, n := uvarint(b)
			if n <= 0 {
				return errors.New("malformed protobuf varint")
			}
			b = b[n:]
			if err := fn(field, wire, v, nil); err != nil {
				return err
			}
		case 1:
			if len(b) < 8 {
				return errors.New("truncated protobuf fixed64")
			}
			b = b[8:]
		case 5:
			if len(b) < 4 {
				return errors.New("truncated protobuf fixed32")
			}
			b = b[4:]
		case 2:
			l, n := uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return errors.New("truncated protobuf field")
			}
			payload := b[n : n+int(l)]
			b = b[n+int(l):]
			if err := fn(field, wire, 0, payload); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unsupported protobuf wire type %d", wire)
		}
	}
	return nil
}

// uvarint decodes a protobuf varint; n <= 0 means malformed or truncated.
func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i := 0; i < len(b) && i < 10; i++ {
		c := b[i]
		x |= uint64(c&0x7f) << (7 * uint(i))
		if c < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}
