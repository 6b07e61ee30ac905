-- Serials a paired site numbered itself because its remote could not be reached (issue 15): they
-- may repeat another offline site's, so the console warns before their labels are printed.
ALTER TABLE batches ADD COLUMN serials_provisional INTEGER NOT NULL DEFAULT 0;
