-- 0003: what a review action was about: the step a reviewer sent back to the person
-- (retake_requested) or what a reviewer saw (viewed: case, image:<step>). Views of personal
-- data are audit rows like any other action.

ALTER TABLE ${db}.review_actions ADD COLUMN IF NOT EXISTS subject Nullable(String);
