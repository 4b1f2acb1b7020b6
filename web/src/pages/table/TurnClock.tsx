import { useEffect, useRef } from "preact/hooks";
import { announcement } from "../../state/announcement";
import { useRemaining } from "../../state/clock";

// Screen readers hear the viewer's own clock at these marks only, not every second.
const MARKS = [5, 10, 30];

/** The last seconds of a turn are urgent: a quarter of the turn, between 3 and 10 s. */
const urgentBelow = (turnSeconds: number): number => Math.min(10, Math.max(3, turnSeconds / 4));

const clockText = (seconds: number): string => `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;

/** The share of the turn still left, 0 to 1 (a page opened late in a turn may not know
 * when it began: the turn's full length is the measure). */
const shareLeft = (left: number, turnSeconds: number): number =>
  turnSeconds > 0 ? Math.min(1, Math.max(0, left / (turnSeconds * 1000))) : 0;

/**
 * The countdown of the seat on turn, to the view's `turnDeadline` on the server's clock:
 * a ring that empties as the time runs out, with the time left in it.
 * On the viewer's own turn, a polite announcement as it passes 30, 10 and 5 seconds
 * (only marks below where the clock started: a fresh 30-second turn is not announced).
 */
export function TurnClock({ deadline, turnSeconds, mine }: { deadline: string; turnSeconds: number; mine: boolean }) {
  const left = useRemaining(deadline) ?? 0;
  const seconds = Math.ceil(left / 1000);
  const urgent = seconds <= urgentBelow(turnSeconds);
  const told = useRef<{ deadline: string; first: number; last: number } | null>(null);

  useEffect(() => {
    if (!mine) return;
    if (told.current?.deadline !== deadline) told.current = { deadline, first: seconds, last: Infinity };
    const state = told.current;
    const mark = MARKS.find((m) => seconds <= m);
    if (mark === undefined || mark >= state.first || mark >= state.last || seconds === 0) return;
    state.last = mark;
    announcement.value = `Your turn: ${mark} seconds left.`;
  }, [seconds, deadline, mine]);

  // The ring's stroke is 100 long: the part drawn is the share of the turn left.
  const drawn = Math.round(shareLeft(left, turnSeconds) * 1000) / 10;
  return (
    <span class={`clock${urgent ? " clock-urgent" : ""}`} role="timer" data-clock={seconds}
      data-urgent={urgent ? "true" : undefined}>
      <svg class="ring" viewBox="0 0 36 36" aria-hidden="true" focusable="false">
        <circle class="ring-track" cx="18" cy="18" r="15.5" />
        <circle class="ring-left" cx="18" cy="18" r="15.5" pathLength={100}
          stroke-dasharray="100 100" stroke-dashoffset={100 - drawn} data-left={drawn} />
      </svg>
      <span class="clock-text"><span class="sr-only">Time left: </span>{clockText(seconds)}</span>
      {urgent && <span class="sr-only"> (hurry)</span>}
    </span>
  );
}
