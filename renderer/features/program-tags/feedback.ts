/**
 * Short beeps for a technician who is looking at the tag, not the screen: a rising two-tone
 * chirp for a verified tag, a low double buzz for a refusal. Web Audio, no sound files.
 */
let ctx: AudioContext | null = null;

function audio(): AudioContext | null {
  if (typeof window === 'undefined' || typeof window.AudioContext !== 'function') return null;
  ctx ??= new window.AudioContext();
  // Browsers start a context suspended until a user gesture; the first button press resumes it.
  if (ctx.state === 'suspended') void ctx.resume();
  return ctx;
}

function tone(ac: AudioContext, freq: number, start: number, length: number, type: OscillatorType, volume: number): void {
  const osc = ac.createOscillator();
  const gain = ac.createGain();
  osc.type = type;
  osc.frequency.value = freq;
  gain.gain.setValueAtTime(0.0001, start);
  gain.gain.exponentialRampToValueAtTime(volume, start + 0.01);
  gain.gain.exponentialRampToValueAtTime(0.0001, start + length);
  osc.connect(gain).connect(ac.destination);
  osc.start(start);
  osc.stop(start + length + 0.02);
}

export type Beep = 'success' | 'failure';

export function beep(kind: Beep): void {
  const ac = audio();
  if (!ac) return;
  const t = ac.currentTime + 0.01;
  if (kind === 'success') {
    tone(ac, 880, t, 0.09, 'sine', 0.25);
    tone(ac, 1320, t + 0.1, 0.14, 'sine', 0.25);
  } else {
    tone(ac, 196, t, 0.16, 'square', 0.12);
    tone(ac, 196, t + 0.22, 0.16, 'square', 0.12);
  }
}

/** Call from a click handler so the context is allowed to play later events' sounds. */
export function unlockAudio(): void {
  audio();
}
