package fraud

import (
	"slices"
	"strings"
	"time"

	"github.com/idstream/idstream/schemas"
)

// identity is the data of a session the checks use, each value from the most trusted
// source that has it: the chip's fields, then the MRZ (the chip's DG1, else a document's),
// then OCR (the documents in step order). Names come from the chip or OCR only (the MRZ has
// no diacritics, which the registries compare).
type identity struct {
	idNumber  string
	fullName  string
	dob       time.Time // zero when unknown
	sex       string    // M, F or ""
	issue     time.Time
	expiry    time.Time
	rawExpiry string // the expiry value as read, for the inputs hash
}

func extractIdentity(st *schemas.SessionState) identity {
	var chip, mrz, ocr map[string]string
	if st.Chip != nil {
		chip = fieldMap(st.Chip.Fields)
		if st.Chip.MRZ != nil {
			mrz = st.Chip.MRZ.Fields
		}
	}
	ocr = map[string]string{}
	for _, d := range st.Documents {
		for k, v := range fieldMap(d.Fields) {
			if _, seen := ocr[k]; !seen {
				ocr[k] = v
			}
		}
		if mrz == nil && d.MRZ != nil && len(d.MRZ.Fields) > 0 {
			mrz = d.MRZ.Fields
		}
	}
	first := func(field string, sources ...map[string]string) string {
		for _, m := range sources {
			if v := strings.TrimSpace(m[field]); v != "" {
				return v
			}
		}
		return ""
	}
	id := identity{
		idNumber:  first("id_number", chip, mrz, ocr),
		fullName:  strings.Join(strings.Fields(first("full_name", chip, ocr)), " "),
		sex:       normalizeSex(first("sex", chip, mrz, ocr)),
		rawExpiry: first("expiry_date", chip, mrz, ocr),
	}
	id.dob, _ = parseDate(first("date_of_birth", chip, mrz, ocr))
	id.issue, _ = parseDate(first("issue_date", chip, ocr))
	id.expiry, _ = parseDate(id.rawExpiry)
	if id.expiry.IsZero() && st.Chip == nil && slices.ContainsFunc(st.Documents, func(d schemas.DocumentRead) bool {
		return d.DocumentType == documentTypeLegacyID
	}) {
		id.expiry = legacyIDExpiry(id.issue)
		id.rawExpiry = id.expiry.Format(time.DateOnly)
	}
	return id
}

// documentTypeLegacyID is the ocr group's name for the 9-digit identity card (CMND).
const documentTypeLegacyID = "legacy_id_card"

// legacyIDEnd is the last day any 9-digit identity card (CMND) is valid: the Law on
// Identification of 2023 (art. 46) ends every CMND on 31 December 2024, whatever its date.
var legacyIDEnd = time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC)

// legacyIDExpiry is when a 9-digit card issued at issue stops being valid: it prints no
// expiry; it was valid 15 years from issue (Decree 05/1999/ND-CP), and in no case after
// legacyIDEnd. An unknown issue date gives legacyIDEnd.
func legacyIDExpiry(issue time.Time) time.Time {
	if issue.IsZero() {
		return legacyIDEnd
	}
	if e := issue.AddDate(15, 0, 0); e.Before(legacyIDEnd) {
		return e
	}
	return legacyIDEnd
}

func fieldMap(fs []schemas.Field) map[string]string {
	m := make(map[string]string, len(fs))
	for _, f := range fs {
		if _, seen := m[f.Name]; !seen && strings.TrimSpace(f.Value) != "" {
			m[f.Name] = f.Value
		}
	}
	return m
}

// parseDate reads YYYY-MM-DD, DD/MM/YYYY, DD-MM-YYYY, DD.MM.YYYY or YYYYMMDD.
func parseDate(s string) (time.Time, bool) {
	for _, layout := range []string{time.DateOnly, "02/01/2006", "02-01-2006", "02.01.2006", "20060102"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func normalizeSex(s string) string {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "M", "MALE", "NAM":
		return "M"
	case "F", "FEMALE", "NỮ", "NU":
		return "F"
	}
	return ""
}

// ready reports whether the snapshot holds the data the checks need: the liveness result of
// the current selfie in flows with a selfie (livenessReady), and the identity data: the
// chip's result when the flow requires the nfc step, else a DocumentRead for every required
// document step. Flows without either need nothing more.
func ready(st *schemas.SessionState) bool {
	if !livenessReady(st) {
		return false
	}
	for _, step := range st.Steps {
		if step == stepNFC {
			return st.Chip != nil
		}
	}
	for _, step := range st.Steps {
		switch step {
		case "document_front", "document_back", "passport":
			found := false
			for _, d := range st.Documents {
				if d.Step == step {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
	}
	return true
}
