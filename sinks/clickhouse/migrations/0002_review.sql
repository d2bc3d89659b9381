-- 0002: human review. The decisions table says who decided; review_actions keeps every
-- action on a case (ekyc.reviews.v1) for audit. "ADD COLUMN IF NOT EXISTS" is run by the
-- migrator as a plain ADD COLUMN when the column is missing (ClickHouse 18.16 lacks it).

ALTER TABLE ${db}.decisions ADD COLUMN IF NOT EXISTS decided_by String DEFAULT 'policy';

ALTER TABLE ${db}.decisions ADD COLUMN IF NOT EXISTS reviewer_id Nullable(String);

-- One row per review action: opened (by the policy), claimed, released, decided (by a
-- reviewer), as the edge or the decision group produced it; whether the session group
-- granted a claim or a decision is in the session's case history and in decisions. note is
-- the reviewer's free text (it may hold personal data): erasure clears it.
CREATE TABLE IF NOT EXISTS ${db}.review_actions (
    event_id        String,
    session_id      String,
    tenant_id       String,
    kind            String,
    reviewer_id     Nullable(String),
    outcome         Nullable(String),
    reason_code     Nullable(String),
    note            Nullable(String),
    policy_version  Nullable(String),
    reasons         Array(String),
    claim_until     Nullable(DateTime),
    at              DateTime,
    at_ms           UInt16
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(at)
ORDER BY (tenant_id, session_id, at, event_id);
