/**
 * DejaVu Sans Mono metrics (unitsPerEm 2048): every glyph advances 1233 units; ascent 1901 and
 * descent 483 make the line box; capitals are 1493 high. A monospaced face lets the PDF, the SVG
 * preview and the PNG fit a caption or a call to action identically without a font engine.
 */
export const CAPTION_FONT_FILE = 'DejaVuSansMono.ttf';
export const CAPTION_FONT_FAMILY = 'DejaVu Sans Mono';
export const MONO_ADVANCE_EM = 1233 / 2048;
export const ASCENT_EM = 1901 / 2048;
export const LINE_BOX_EM = (1901 + 483) / 2048;
export const CAP_HEIGHT_EM = 1493 / 2048;
