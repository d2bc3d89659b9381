package face

import (
	"fmt"
	"slices"
	"sync"

	"gocv.io/x/gocv"
)

// dnn is one loaded network with a fixed input shape and named outputs. A gocv Net is not
// safe for concurrent use, so every forward pass holds mu: a dnn is safe for concurrent use,
// and calls on one network run one at a time.
type dnn struct {
	role    string // detector, landmark, embedder, liveness: for errors
	mu      sync.Mutex
	net     gocv.Net
	input   string
	shape   []int // NCHW, N = 1
	outputs []string
	sizes   []int // element count of each output
}

// loadDNN checks path as an ONNX model whose single input has shape in (batch may be symbolic)
// and whose outputs include every name in outs with the given element counts, then loads it
// and runs one forward pass on zeros to prove it executes. Everything that can be checked in Go
// is checked before OpenCV sees the file.
func loadDNN(role, path string, in []int, outs []string, sizes []int) (*dnn, error) {
	data, g, err := readONNX(path)
	if err != nil {
		return nil, fmt.Errorf("%s model: %w", role, err)
	}
	if len(g.Inputs) != 1 {
		return nil, fmt.Errorf("%s model: %w: %d inputs, want 1", role, ErrBadModel, len(g.Inputs))
	}
	gin := g.Inputs[0]
	if len(gin.Shape) != len(in) {
		return nil, fmt.Errorf("%s model: %w: input %q has shape %v, want %v", role, ErrBadModel, gin.Name, gin.Shape, in)
	}
	for i, d := range gin.Shape {
		if d != int64(in[i]) && !(i == 0 && d <= 0) {
			return nil, fmt.Errorf("%s model: %w: input %q has shape %v, want %v", role, ErrBadModel, gin.Name, gin.Shape, in)
		}
	}
	for i, name := range outs {
		j := slices.IndexFunc(g.Outputs, func(v onnxValue) bool { return v.Name == name })
		if j < 0 {
			return nil, fmt.Errorf("%s model: %w: no output %q (has %v)", role, ErrBadModel, name, g.Outputs)
		}
		n := 1
		for k, d := range g.Outputs[j].Shape {
			if d <= 0 && k == 0 {
				d = 1
			}
			if d <= 0 {
				n = -1
				break
			}
			n *= int(d)
		}
		if n > 0 && n != sizes[i] {
			return nil, fmt.Errorf("%s model: %w: output %q has shape %v (%d values), want %d values",
				role, ErrBadModel, name, g.Outputs[j].Shape, n, sizes[i])
		}
	}
	net, err := gocv.ReadNetFromONNXBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%s model: %w: %v", role, ErrBadModel, err)
	}
	d := &dnn{role: role, net: net, input: gin.Name, shape: in, outputs: outs, sizes: sizes}
	n := 1
	for _, v := range in {
		n *= v
	}
	if _, err := d.forward(make([]float32, n)); err != nil {
		net.Close()
		return nil, err
	}
	return d, nil
}

// forward runs the network on blob (the input's element count, NCHW) and returns a Go copy of
// each output, in the order of the outputs given to loadDNN.
func (d *dnn) forward(blob []float32) ([][]float32, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	in := gocv.NewMatWithSizes(d.shape, gocv.MatTypeCV32F)
	defer in.Close()
	buf, err := in.DataPtrFloat32()
	if err != nil || len(buf) != len(blob) {
		return nil, fmt.Errorf("%s: input blob of %d values, want %d (%v)", d.role, len(blob), len(buf), err)
	}
	copy(buf, blob)
	d.net.SetInput(in, d.input)
	mats := d.net.ForwardLayers(d.outputs)
	defer func() {
		for i := range mats {
			mats[i].Close()
		}
	}()
	if len(mats) != len(d.outputs) {
		return nil, fmt.Errorf("%s: %d outputs, want %d", d.role, len(mats), len(d.outputs))
	}
	res := make([][]float32, len(mats))
	for i := range mats {
		v, err := mats[i].DataPtrFloat32()
		if err != nil {
			return nil, fmt.Errorf("%s: output %q: %w", d.role, d.outputs[i], err)
		}
		if len(v) != d.sizes[i] {
			return nil, fmt.Errorf("%s: output %q has %d values, want %d", d.role, d.outputs[i], len(v), d.sizes[i])
		}
		res[i] = slices.Clone(v)
	}
	return res, nil
}

// close releases the network; later forward calls must not happen.
func (d *dnn) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.net.Close()
}
