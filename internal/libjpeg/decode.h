// Raw (planar, not upsampled) decoding of baseline and progressive JPEG with libjpeg(-turbo),
// for libjpeg.go. Errors never exit the process: libjpeg's error_exit returns here by
// longjmp, and warnings (corrupt data libjpeg would paper over) count as failure.
#include <stddef.h>

typedef struct {
	int width, height;
	int components;     // 1 or 3
	int ycbcr;          // 1 when the colour space is YCbCr (3 components) or grey (1)
	int h[3], v[3];     // sampling factors per component
} ij_header;

// ij_read_header fills hdr from the JPEG in data. Returns 0, or -1 with msg (≥ 200 bytes)
// filled.
int ij_read_header(const unsigned char *data, size_t len, ij_header *hdr, char *msg);

// ij_decode_raw decodes the JPEG in data into plane c (pc: component c's samples, row
// stride sc, rc rows allocated; unused planes NULL): the component's native resolution, no colour
// conversion. Each plane must hold, for every iMCU row, v[c]*8 rows of strides[c] ≥
// width_in_blocks*8 samples. Returns 0, or -1 with msg filled (including on any warning).
int ij_decode_raw(const unsigned char *data, size_t len, int ncomp,
                  unsigned char *p0, unsigned char *p1, unsigned char *p2,
                  int s0, int s1, int s2, int r0, int r1, int r2, char *msg);
