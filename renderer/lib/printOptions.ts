/** Print option helpers, kept free of browser APIs for unit tests. */
import { MAX_OFFSET_MM } from '../../server/schemas/printing.ts';

/** A millimetre offset as typed: '' = none, else a number within the server's range. */
export function parseOffset(text: string): number | undefined | 'bad' {
  if (text.trim() === '') return undefined;
  const n = Number(text.replace(',', '.'));
  return Number.isFinite(n) && Math.abs(n) <= MAX_OFFSET_MM ? n : 'bad';
}

/**
 * A layout's name in two parts, so that the picker shows a short title whole and the rest
 * beside it: "Avery L7160 — A4, 21 labels (63.5 × 38.1 mm)" → "Avery L7160" and "A4, 21 labels
 * (63.5 × 38.1 mm)"; "Roll label 25 × 25 mm (one label per page)" → "Roll label 25 × 25 mm" and
 * "one label per page".
 */
export function layoutTitle(name: string): { title: string; detail: string } {
  const dash = /\s+[—–-]\s+/.exec(name);
  if (dash) return { title: name.slice(0, dash.index).trim(), detail: name.slice(dash.index + dash[0].length).trim() };
  const paren = /^(.*\S)\s*\(([^()]*)\)\s*$/.exec(name);
  if (paren) return { title: paren[1]!, detail: paren[2]! };
  return { title: name, detail: '' };
}
