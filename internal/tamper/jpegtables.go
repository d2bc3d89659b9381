package tamper

import "encoding/binary"

// zigzag[i] is the natural (row-major) index of the i-th coefficient in zigzag order.
var zigzag = [64]int{
	0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
}

// LuminanceTable returns the quantisation table (natural order) of a JPEG's first frame
// component (the luminance), read from its DQT and SOF segments before the first scan. It
// reports false when data is not a JPEG or the table cannot be found; it never panics.
func LuminanceTable(data []byte) ([64]uint16, bool) {
	var tables [4][64]uint16
	var have [4]bool
	if len(data) < 4 || data[0] != 0xFF || data[1] != 0xD8 {
		return [64]uint16{}, false
	}
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xFF {
			return [64]uint16{}, false
		}
		marker := data[i+1]
		if marker == 0xFF {
			i++
			continue
		}
		if marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7) {
			i += 2
			continue
		}
		if marker == 0xDA || marker == 0xD9 {
			return [64]uint16{}, false // a scan before any frame header
		}
		n := int(binary.BigEndian.Uint16(data[i+2:]))
		if n < 2 || i+2+n > len(data) {
			return [64]uint16{}, false
		}
		seg := data[i+4 : i+2+n]
		switch {
		case marker == 0xDB: // DQT: one or more tables
			for len(seg) > 0 {
				prec, id := seg[0]>>4, int(seg[0]&0x0F)
				size := 64
				if prec == 1 {
					size = 128
				}
				if id > 3 || len(seg) < 1+size {
					return [64]uint16{}, false
				}
				for k := range 64 {
					v := uint16(seg[1+k])
					if prec == 1 {
						v = binary.BigEndian.Uint16(seg[1+2*k:])
					}
					tables[id][zigzag[k]] = v
				}
				have[id] = true
				seg = seg[1+size:]
			}
		case marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC: // SOFn
			if len(seg) < 6+3 || seg[5] == 0 {
				return [64]uint16{}, false
			}
			tq := int(seg[6+2])
			if tq > 3 || !have[tq] {
				return [64]uint16{}, false
			}
			return tables[tq], true
		}
		i += 2 + n
	}
	return [64]uint16{}, false
}
