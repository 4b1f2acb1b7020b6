import { useEffect, useRef } from "preact/hooks";
import { announcement } from "../../state/announcement";
import { useRemaining } from "../../state/clock";

// Screen readers hear the viewer's own clock at these marks only, not every second.
const MARKS = [5, 10, 30];

/** The last seconds of a turn are urgent: a quarter of the turn, between 3 and 10 s. */
const urgentBelow = (turnSeconds: number): number => Math.min(10, Math.max(3, turnSeconds / 4));

const clockText = (seconds: number): string => `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;

/**
 * The countdown of the seat on turn, to the view's `turnDeadline` on the server's clock.
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

  return (
    <span class={`clock${urgent ? " clock-urgent" : ""}`} role="timer" data-clock={seconds}
      data-urgent={urgent ? "true" : undefined}>
      <span class="sr-only">Time left: </span>{clockText(seconds)}
      {urgent && <span class="sr-only"> (hurry)</span>}
    </span>
  );
}
