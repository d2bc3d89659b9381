package registry

// ID numbers of the sandbox personas. Each is a structurally valid 12-digit Vietnamese
// personal ID number: a 3-digit province code, a century/sex digit (0 male / 1 female born
// 1900–1999, 2 male / 3 female born 2000–2099), the last two digits of the birth year, and 6
// digits, consistent with the persona's date of birth and sex. Any other ID number is not
// found by the sandbox.
const (
	// PersonaMatchID: every lookup matches and every record is found.
	PersonaMatchID = "001090012345"
	// PersonaNameMismatchID: the registries spell the name with another diacritic.
	PersonaNameMismatchID = "079085004321"
	// PersonaDOBMismatchID: the registries hold the date of birth with day and month swapped.
	PersonaDOBMismatchID = "036192007788"
	// PersonaRevokedID: the ID number has been revoked.
	PersonaRevokedID = "048078001122"
	// PersonaDeceasedID: the holder is recorded as deceased; every record is inactive.
	PersonaDeceasedID = "038148003344"
	// PersonaNotFoundID: no registry knows this ID number.
	PersonaNotFoundID = "001201005566"
	// PersonaSparseRecordsID: identity matches; no tax record, health insurance found,
	// social insurance inactive.
	PersonaSparseRecordsID = "031303007890"
	// PersonaUnavailableID: every lookup fails with HTTP 503 (ErrUnavailable in process).
	PersonaUnavailableID = "092095002468"
	// PersonaSlowID: every lookup answers (as for a match) only after the sandbox's slow
	// delay, past a short client timeout.
	PersonaSlowID = "046188001357"
)

// Behavior is how the sandbox answers for a persona.
type Behavior string

// Persona behaviours.
const (
	// BehaviorNormal: the sandbox answers at once.
	BehaviorNormal Behavior = "normal"
	// BehaviorUnavailable: every lookup fails with HTTP 503 / ErrUnavailable.
	BehaviorUnavailable Behavior = "unavailable"
	// BehaviorSlow: every lookup waits the sandbox's slow delay before answering.
	BehaviorSlow Behavior = "slow"
)

// Persona is one deterministic person of the sandbox registry. FullName, DateOfBirth and Sex
// are what the person's document says; querying with them (Persona.Query) yields the
// expected outcomes below. The registries' own record may differ (that is what a mismatch
// persona is about).
type Persona struct {
	// Key is a short stable name, e.g. "name_mismatch".
	Key string
	// Description says what the persona is for, in one line.
	Description string
	IDNumber    string
	FullName    string
	DateOfBirth string // YYYY-MM-DD
	Sex         string // SexMale or SexFemale
	Behavior    Behavior
	// Identity and the record outcomes are what the lookups answer for Query(); they are
	// empty for BehaviorUnavailable, which answers none.
	Identity        IdentityOutcome
	Tax             RecordOutcome
	HealthInsurance RecordOutcome
	SocialInsurance RecordOutcome
}

// Query returns the query built from the persona's document data.
func (p Persona) Query() Query {
	return Query{IDNumber: p.IDNumber, FullName: p.FullName, DateOfBirth: p.DateOfBirth, Sex: p.Sex}
}

// identityStatus is the state of an ID number in the sandbox's identity database.
type identityStatus int

const (
	statusActive identityStatus = iota
	statusRevoked
	statusDeceased
)

// recordState is the state of one tax/health/social record in the sandbox.
type recordState int

const (
	recordAbsent recordState = iota
	recordActive
	recordInactive
)

// sandboxPerson is what the sandbox's registries hold for a persona.
type sandboxPerson struct {
	persona Persona
	// absent: no registry holds the person (lookups answer not_found).
	absent bool
	// The registries' record of the person.
	fullName    string
	dateOfBirth string
	sex         string
	status      identityStatus
	records     map[Lookup]recordState
}

// allRecords returns the same state for the three record lookups.
func allRecords(s recordState) map[Lookup]recordState {
	return map[Lookup]recordState{LookupTax: s, LookupHealthInsurance: s, LookupSocialInsurance: s}
}

// sandboxPeople returns the sandbox's persons, in the order of Personas.
func sandboxPeople() []sandboxPerson {
	return []sandboxPerson{
		{
			persona: Persona{
				Key: "match", Description: "every lookup matches; every record found",
				IDNumber: PersonaMatchID, FullName: "NGUYỄN VĂN AN", DateOfBirth: "1990-03-15", Sex: SexMale,
				Behavior: BehaviorNormal, Identity: IdentityMatch,
				Tax: RecordFound, HealthInsurance: RecordFound, SocialInsurance: RecordFound,
			},
			fullName: "NGUYỄN VĂN AN", dateOfBirth: "1990-03-15", sex: SexMale,
			status: statusActive, records: allRecords(recordActive),
		},
		{
			persona: Persona{
				Key: "name_mismatch", Description: "the registries spell the name CƯƠNG, the card CƯỜNG (diacritics matter)",
				IDNumber: PersonaNameMismatchID, FullName: "LÊ VĂN CƯỜNG", DateOfBirth: "1985-11-02", Sex: SexMale,
				Behavior: BehaviorNormal, Identity: IdentityNameMismatch,
				Tax: RecordMismatch, HealthInsurance: RecordMismatch, SocialInsurance: RecordMismatch,
			},
			fullName: "LÊ VĂN CƯƠNG", dateOfBirth: "1985-11-02", sex: SexMale,
			status: statusActive, records: allRecords(recordActive),
		},
		{
			persona: Persona{
				Key: "dob_mismatch", Description: "the registries hold 1992-09-04, the card 1992-04-09 (day and month swapped)",
				IDNumber: PersonaDOBMismatchID, FullName: "TRẦN THỊ BÍCH NGỌC", DateOfBirth: "1992-04-09", Sex: SexFemale,
				Behavior: BehaviorNormal, Identity: IdentityDOBMismatch,
				Tax: RecordMismatch, HealthInsurance: RecordMismatch, SocialInsurance: RecordMismatch,
			},
			fullName: "TRẦN THỊ BÍCH NGỌC", dateOfBirth: "1992-09-04", sex: SexFemale,
			status: statusActive, records: allRecords(recordActive),
		},
		{
			persona: Persona{
				Key: "revoked", Description: "the ID number is revoked; tax and social records found, health insurance inactive",
				IDNumber: PersonaRevokedID, FullName: "PHẠM MINH TUẤN", DateOfBirth: "1978-06-30", Sex: SexMale,
				Behavior: BehaviorNormal, Identity: IdentityRevoked,
				Tax: RecordFound, HealthInsurance: RecordInactive, SocialInsurance: RecordFound,
			},
			fullName: "PHẠM MINH TUẤN", dateOfBirth: "1978-06-30", sex: SexMale,
			status: statusRevoked,
			records: map[Lookup]recordState{
				LookupTax: recordActive, LookupHealthInsurance: recordInactive, LookupSocialInsurance: recordActive,
			},
		},
		{
			persona: Persona{
				Key: "deceased", Description: "the holder is recorded as deceased; every record inactive",
				IDNumber: PersonaDeceasedID, FullName: "HOÀNG THỊ LAN", DateOfBirth: "1948-01-20", Sex: SexFemale,
				Behavior: BehaviorNormal, Identity: IdentityDeceased,
				Tax: RecordInactive, HealthInsurance: RecordInactive, SocialInsurance: RecordInactive,
			},
			fullName: "HOÀNG THỊ LAN", dateOfBirth: "1948-01-20", sex: SexFemale,
			status: statusDeceased, records: allRecords(recordInactive),
		},
		{
			persona: Persona{
				Key: "not_found", Description: "no registry knows the ID number (as for any ID number not listed here)",
				IDNumber: PersonaNotFoundID, FullName: "ĐỖ QUANG HUY", DateOfBirth: "2001-12-05", Sex: SexMale,
				Behavior: BehaviorNormal, Identity: IdentityNotFound,
				Tax: RecordNotFound, HealthInsurance: RecordNotFound, SocialInsurance: RecordNotFound,
			},
			absent: true,
		},
		{
			persona: Persona{
				Key: "sparse_records", Description: "identity matches; no tax record, health insurance found, social insurance inactive",
				IDNumber: PersonaSparseRecordsID, FullName: "VŨ THỊ HẠNH", DateOfBirth: "2003-08-17", Sex: SexFemale,
				Behavior: BehaviorNormal, Identity: IdentityMatch,
				Tax: RecordNotFound, HealthInsurance: RecordFound, SocialInsurance: RecordInactive,
			},
			fullName: "VŨ THỊ HẠNH", dateOfBirth: "2003-08-17", sex: SexFemale,
			status: statusActive,
			records: map[Lookup]recordState{
				LookupTax: recordAbsent, LookupHealthInsurance: recordActive, LookupSocialInsurance: recordInactive,
			},
		},
		{
			persona: Persona{
				Key: "unavailable", Description: "every lookup fails with HTTP 503 (registry down: ErrUnavailable, warn/skipped)",
				IDNumber: PersonaUnavailableID, FullName: "BÙI VĂN NAM", DateOfBirth: "1995-02-28", Sex: SexMale,
				Behavior: BehaviorUnavailable,
			},
			fullName: "BÙI VĂN NAM", dateOfBirth: "1995-02-28", sex: SexMale,
			status: statusActive, records: allRecords(recordActive),
		},
		{
			persona: Persona{
				Key: "slow", Description: "every lookup answers as a match only after the slow delay (a client timeout gives ErrUnavailable)",
				IDNumber: PersonaSlowID, FullName: "ĐẶNG THỊ MAI", DateOfBirth: "1988-10-10", Sex: SexFemale,
				Behavior: BehaviorSlow, Identity: IdentityMatch,
				Tax: RecordFound, HealthInsurance: RecordFound, SocialInsurance: RecordFound,
			},
			fullName: "ĐẶNG THỊ MAI", dateOfBirth: "1988-10-10", sex: SexFemale,
			status: statusActive, records: allRecords(recordActive),
		},
	}
}

// Personas lists the sandbox personas with the outcomes each lookup gives for
// Persona.Query(). The slice is a fresh copy.
func Personas() []Persona {
	people := sandboxPeople()
	out := make([]Persona, len(people))
	for i, p := range people {
		out[i] = p.persona
	}
	return out
}
