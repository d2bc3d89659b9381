package ocr

import "github.com/idstream/idstream/internal/docread"

// The readings of a page, in the order they are tried (but for a page read as almost no
// words, whose type is told on the flattened reading second: detectOnReadings).
const (
	readingAsRead    = iota // the page pass (docread.ReadPage, docread.ReadPageAbove)
	readingBlock            // read as one block (docread.ReadAsBlock)
	readingBinarised        // thresholded locally (docread.ReadBinarised)
	readingGrown            // from the picture with the document's outline grown (docread.ReadGrown)
	readingFlattened        // mid-grey patterns painted out (docread.ReadFlattened)
	numReadings
)

// readings holds the readings of one page, each made once, when first asked for: every
// reading is of the same rectified document (the grown one of the same picture), so the
// readings of a page read as one block are those of the page as read. Not safe for
// concurrent use.
type readings struct {
	reader *docread.Reader
	pages  [numReadings]*docread.Page
}

// newReadings returns the readings of page, the page pass.
func newReadings(reader *docread.Reader, page *docread.Page) *readings {
	rs := &readings{reader: reader}
	rs.pages[readingAsRead] = page
	return rs
}

// at returns reading k, reading it when it has not been. The error is only for OCR engine
// failures.
func (rs *readings) at(k int) (*docread.Page, error) {
	if rs.pages[k] == nil {
		read := [numReadings]func(*docread.Page) (*docread.Page, error){
			readingBlock: rs.reader.ReadAsBlock, readingBinarised: rs.reader.ReadBinarised, readingGrown: rs.reader.ReadGrown,
			readingFlattened: rs.reader.ReadFlattened,
		}[k]
		p, err := read(rs.pages[readingAsRead])
		if err != nil {
			return nil, err
		}
		rs.pages[k] = p
	}
	return rs.pages[k], nil
}

// from returns the readings in the order they are tried after first: first, then the others
// in their order.
func from(first int) []int {
	out := []int{first}
	for k := range numReadings {
		if k != first {
			out = append(out, k)
		}
	}
	return out
}
