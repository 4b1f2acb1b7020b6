// The table's sounds, made on the spot with the Web Audio API (no audio file): a rising
// pair of notes for the player's turn, a bright arpeggio when their team wins a trick, a
// falling pair when the other team does. Silent unless the player turned sounds on.
import { soundsOn } from "./prefs";

export type Cue = "turn" | "trick-won" | "trick-lost";

// Frequencies (Hz) of each cue's notes, played one after the other.
const NOTES: Record<Cue, readonly number[]> = {
  turn: [660, 880],
  "trick-won": [523.25, 659.25, 783.99],
  "trick-lost": [392, 311.13],
};
const NOTE_SECONDS = 0.11;
const VOLUME = 0.12;

let context: AudioContext | null = null;
// When the cue playing now ends (on the context's clock): cues follow, never overlap.
let freeAt = 0;

/** The audio context, made (or woken) on demand; null where Web Audio is missing. */
function audio(): AudioContext | null {
  if (typeof AudioContext === "undefined") return null;
  context ??= new AudioContext();
  if (context.state === "suspended") void context.resume();
  return context;
}

/** Play `cue` if sounds are on. */
export function play(cue: Cue): void {
  if (!soundsOn.value) return;
  const ctx = audio();
  if (!ctx) return;
  const start = Math.max(ctx.currentTime + 0.01, freeAt);
  freeAt = start + NOTES[cue].length * NOTE_SECONDS;
  NOTES[cue].forEach((frequency, i) => {
    const at = start + i * NOTE_SECONDS;
    const tone = ctx.createOscillator();
    const gain = ctx.createGain();
    tone.type = "sine";
    tone.frequency.value = frequency;
    // A soft attack and a quick fade: a chime, not a click.
    gain.gain.setValueAtTime(0, at);
    gain.gain.linearRampToValueAtTime(VOLUME, at + 0.015);
    gain.gain.exponentialRampToValueAtTime(0.0001, at + NOTE_SECONDS * 1.8);
    tone.connect(gain).connect(ctx.destination);
    tone.start(at);
    tone.stop(at + NOTE_SECONDS * 2);
  });
}

// Turning sounds on is a click: the browser lets the page start its audio then.
soundsOn.subscribe((on) => {
  if (on) play("turn");
});
