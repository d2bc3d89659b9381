-- 0001: the tables of API.md section 3. Valid on ClickHouse 18.16 and current ClickHouse:
-- DateTime plus a UInt16 millisecond column (no DateTime64), no TTL, CODEC or skipping
-- indexes. Every statement is idempotent (IF NOT EXISTS) so a migration interrupted before
-- it was recorded can run again. ${db} is replaced by the database name.

CREATE DATABASE IF NOT EXISTS ${db};

-- One row per session that reached a terminal status (verified, rejected, expired,
-- cancelled); latest snapshot wins (version = number of events folded into the snapshot).
CREATE TABLE IF NOT EXISTS ${db}.decisions (
    session_id          String,
    tenant_id           String,
    flow                String,
    reference_id        Nullable(String),
    status              String,
    outcome             String,
    policy_version      String,
    decision_id         String,
    reasons             Array(String),
    reason_messages     Array(String),
    data_retention      String,
    locale              String,
    created_at          DateTime,
    created_at_ms       UInt16,
    expires_at          DateTime,
    decided_at          Nullable(DateTime),
    decided_at_ms       UInt16,
    first_capture_at    Nullable(DateTime),
    first_capture_at_ms UInt16,
    captured_at         Nullable(DateTime),
    captured_at_ms      UInt16,
    quality_at          Nullable(DateTime),
    quality_at_ms       UInt16,
    document_read_at    Nullable(DateTime),
    document_read_at_ms UInt16,
    chip_verified_at    Nullable(DateTime),
    chip_verified_at_ms UInt16,
    liveness_at         Nullable(DateTime),
    liveness_at_ms      UInt16,
    facematch_at        Nullable(DateTime),
    facematch_at_ms     UInt16,
    steps               Array(String),
    checks_total        UInt16,
    checks_failed       UInt16,
    document_type       String,
    id_number           Nullable(String),
    id_number_hash      String,
    full_name           Nullable(String),
    date_of_birth       Nullable(String),
    sex                 Nullable(String),
    nationality         Nullable(String),
    place_of_origin     Nullable(String),
    place_of_residence  Nullable(String),
    issue_date          Nullable(String),
    expiry_date         Nullable(String),
    other_keys          Array(String),
    other_values        Array(String),
    erased              UInt8,
    version             UInt64,
    event_id            String,
    ingested_at         DateTime
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(created_at)
ORDER BY (tenant_id, session_id);

-- One row per check per session (the checks of the latest terminal snapshot).
CREATE TABLE IF NOT EXISTS ${db}.checks (
    session_id     String,
    tenant_id      String,
    flow           String,
    name           String,
    status         String,
    score          Nullable(Float64),
    threshold      Nullable(Float64),
    reason_code    Nullable(String),
    model_version  Nullable(String),
    source         String,
    capture_id     Nullable(String),
    outcome        String,
    created_at     DateTime,
    decided_at     Nullable(DateTime),
    version        UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(created_at)
ORDER BY (tenant_id, session_id, name);

-- One row per consent record of cmp.consents.v1 (append-only; a replay deduplicates).
CREATE TABLE IF NOT EXISTS ${db}.consents (
    consent_id      String,
    tracking_id     String,
    tenant_id       String,
    purpose_id      String,
    status          String,
    notice_version  String,
    channel         String,
    ip              String,
    user_agent      String,
    recorded_at     DateTime,
    recorded_at_ms  UInt16,
    proof_sha256    String,
    event_id        String
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(recorded_at)
ORDER BY (tenant_id, tracking_id, consent_id);

-- One row per webhook delivery attempt (ekyc.webhook.attempts.v1).
CREATE TABLE IF NOT EXISTS ${db}.webhook_deliveries (
    event_id           String,
    session_id         String,
    tenant_id          String,
    webhook_id         String,
    decision_event_id  String,
    url                String,
    attempt            UInt16,
    status_code        Nullable(Int32),
    error              Nullable(String),
    duration_ms        UInt32,
    outcome            String,
    attempted_at       DateTime,
    attempted_at_ms    UInt16,
    next_attempt_at    Nullable(DateTime)
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(attempted_at)
ORDER BY (tenant_id, webhook_id, attempt);

-- Face embeddings for 1:N duplicate search (written by the fraud work); erasure marks rows
-- deleted and empties the embedding.
CREATE TABLE IF NOT EXISTS ${db}.face_index (
    tenant_id       String,
    session_id      String,
    id_number_hash  String,
    embedding       Array(Float32),
    model_version   String,
    created_at      DateTime,
    created_at_ms   UInt16,
    deleted         UInt8,
    version         UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(created_at)
ORDER BY (tenant_id, session_id);
