-- QR codes on brand (issue 17 item 2; SQLite migration 077): an organization's default code style (colours, module
-- style, logo on or off, call-to-action frame) and its logo. One row per organization. The logo
-- is kept as the PNG the server re-encoded (an SVG upload is rasterised first), base64 in TEXT
-- so both backends store it alike. Local to this database: not captured for sync.
CREATE TABLE qr_styles (
  org_id           TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  fg               TEXT NOT NULL,
  bg               TEXT NOT NULL,
  module_style     TEXT NOT NULL,
  logo             INTEGER NOT NULL DEFAULT 0,  -- 1: codes carry the logo by default
  frame_text       TEXT,                        -- null: no frame
  logo_png         TEXT,                        -- base64 PNG; null: no logo uploaded
  logo_width       INTEGER,
  logo_height      INTEGER,
  logo_uploaded_as TEXT,                        -- image/png or image/svg+xml
  logo_updated_at  TEXT,
  updated_at       TEXT NOT NULL
);
