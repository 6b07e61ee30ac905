-- Printing: printer profiles. Each printer (and paper tray) that prints label sheets keeps its
-- calibration offsets (mm) and its usual layout, so a site calibrates once and every later
-- print, from any console, lands on the labels.
CREATE TABLE printer_profiles (
  id         TEXT PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name       TEXT NOT NULL,
  layout     TEXT,                       -- a layout id from resources/layouts (null: none preferred)
  offset_x   REAL NOT NULL DEFAULT 0,    -- mm, + moves the print right
  offset_y   REAL NOT NULL DEFAULT 0,    -- mm, + moves the print down
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX printer_profiles_org ON printer_profiles(org_id, created_at DESC);
