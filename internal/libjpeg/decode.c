#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include "decode.h"

typedef struct {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	char *msg;
	int warned;
} ij_error;

static void ij_error_exit(j_common_ptr cinfo) {
	ij_error *err = (ij_error *)cinfo->err;
	(*cinfo->err->format_message)(cinfo, err->msg);
	longjmp(err->jump, 1);
}

// ij_emit_message records the first warning (level -1) as the failure; trace messages
// (level ≥ 0) are ignored.
static void ij_emit_message(j_common_ptr cinfo, int level) {
	ij_error *err = (ij_error *)cinfo->err;
	if (level < 0 && !err->warned) {
		err->warned = 1;
		(*cinfo->err->format_message)(cinfo, err->msg);
	}
}

static void ij_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void ij_setup(struct jpeg_decompress_struct *cinfo, ij_error *err, char *msg) {
	cinfo->err = jpeg_std_error(&err->pub);
	err->pub.error_exit = ij_error_exit;
	err->pub.emit_message = ij_emit_message;
	err->pub.output_message = ij_output_message;
	err->msg = msg;
	err->warned = 0;
	msg[0] = 0;
}

int ij_read_header(const unsigned char *data, size_t len, ij_header *hdr, char *msg) {
	struct jpeg_decompress_struct cinfo;
	ij_error err;
	ij_setup(&cinfo, &err, msg);
	if (setjmp(err.jump)) {
		jpeg_destroy_decompress(&cinfo);
		return -1;
	}
	jpeg_create_decompress(&cinfo);
	jpeg_mem_src(&cinfo, data, (unsigned long)len);
	jpeg_read_header(&cinfo, TRUE);
	memset(hdr, 0, sizeof(*hdr));
	hdr->width = (int)cinfo.image_width;
	hdr->height = (int)cinfo.image_height;
	hdr->components = cinfo.num_components;
	hdr->ycbcr = (cinfo.num_components == 3 && cinfo.jpeg_color_space == JCS_YCbCr) ||
	             (cinfo.num_components == 1 && cinfo.jpeg_color_space == JCS_GRAYSCALE);
	for (int c = 0; c < cinfo.num_components && c < 3; c++) {
		hdr->h[c] = cinfo.comp_info[c].h_samp_factor;
		hdr->v[c] = cinfo.comp_info[c].v_samp_factor;
	}
	jpeg_destroy_decompress(&cinfo);
	return 0;
}

int ij_decode_raw(const unsigned char *data, size_t len, int ncomp,
                  unsigned char *p0, unsigned char *p1, unsigned char *p2,
                  int s0, int s1, int s2, int r0, int r1, int r2, char *msg) {
	unsigned char *planes[3] = {p0, p1, p2};
	int strides[3] = {s0, s1, s2}, rows[3] = {r0, r1, r2};
	struct jpeg_decompress_struct cinfo;
	ij_error err;
	// Every component's row pointers for one iMCU row, on the stack: nothing to free when
	// libjpeg's error_exit jumps back (v_samp_factor is at most MAX_SAMP_FACTOR, 4).
	JSAMPROW rowbuf[3 * MAX_SAMP_FACTOR * DCTSIZE];
	ij_setup(&cinfo, &err, msg);
	if (setjmp(err.jump)) {
		jpeg_destroy_decompress(&cinfo);
		return -1;
	}
	jpeg_create_decompress(&cinfo);
	jpeg_mem_src(&cinfo, data, (unsigned long)len);
	jpeg_read_header(&cinfo, TRUE);
	if (cinfo.num_components != ncomp || ncomp < 1 || ncomp > 3) {
		snprintf(msg, 200, "%d components, expected %d", cinfo.num_components, ncomp);
		jpeg_destroy_decompress(&cinfo);
		return -1;
	}
	cinfo.raw_data_out = TRUE;
	cinfo.dct_method = JDCT_ISLOW; // the IDCT Go's image/jpeg implements
	cinfo.do_fancy_upsampling = FALSE;
	jpeg_start_decompress(&cinfo);
	int per[3];
	for (int c = 0; c < ncomp; c++) {
		per[c] = cinfo.comp_info[c].v_samp_factor * DCTSIZE;
		if (per[c] < 1 || per[c] > MAX_SAMP_FACTOR * DCTSIZE) {
			snprintf(msg, 200, "component %d: sampling factor %d", c, cinfo.comp_info[c].v_samp_factor);
			jpeg_destroy_decompress(&cinfo);
			return -1;
		}
		if (strides[c] < (int)cinfo.comp_info[c].width_in_blocks * DCTSIZE) {
			snprintf(msg, 200, "component %d: stride %d below %d", c, strides[c],
			         (int)cinfo.comp_info[c].width_in_blocks * DCTSIZE);
			jpeg_destroy_decompress(&cinfo);
			return -1;
		}
	}
	JSAMPARRAY comp[3];
	for (int c = 0, k = 0; c < ncomp; c++) {
		comp[c] = rowbuf + k;
		k += per[c];
	}
	int lines = cinfo.max_v_samp_factor * DCTSIZE;
	for (int row = 0; cinfo.output_scanline < cinfo.output_height; row++) {
		for (int c = 0; c < ncomp; c++) {
			for (int i = 0; i < per[c]; i++) {
				int y = row * per[c] + i;
				// Rows past the plane's end are never written (the last iMCU row writes
				// only its useful rows), but libjpeg wants a pointer for each: reuse the last.
				if (y >= rows[c]) y = rows[c] - 1;
				comp[c][i] = planes[c] + (size_t)y * strides[c];
			}
		}
		if (jpeg_read_raw_data(&cinfo, comp, lines) == 0) {
			snprintf(msg, 200, "suspended at scanline %u", cinfo.output_scanline);
			jpeg_destroy_decompress(&cinfo);
			return -1;
		}
		if (err.warned) break;
	}
	if (err.warned) {
		jpeg_destroy_decompress(&cinfo);
		return -1;
	}
	jpeg_finish_decompress(&cinfo);
	int warned = err.warned;
	jpeg_destroy_decompress(&cinfo);
	return warned ? -1 : 0;
}
