import { useId } from "preact/hooks";
import { BOT_LEVELS, botLevelName } from "../cards";
import type { BotLevel, TableSummaryFragment, Visibility } from "../graphql/generated";

export const DEFAULT_TURN_SECONDS = 30;

/** The turn clock of a table in words: "30 s per turn", or "no turn clock". */
export function clockWords(turnSeconds: number): string {
  if (turnSeconds === 0) return "no turn clock";
  return turnSeconds % 60 === 0 ? `${turnSeconds / 60} min per turn` : `${turnSeconds} s per turn`;
}

/** What a table's header says of its clock and its stand-in bots. */
export function liveOptionWords(table: Pick<TableSummaryFragment, "turnSeconds" | "replacementBot">): string {
  return `${clockWords(table.turnSeconds)} · absent players: ${botLevelName(table.replacementBot)} bot`;
}

/** Seconds per turn: 5 to 300, or 0 (no clock) where the visibility allows it. */
export function TurnSecondsField(props: { value: string; visibility: Visibility; onInput: (value: string) => void }) {
  const hint = useId();
  const untimedAllowed = props.visibility !== "PUBLIC";
  return (
    <>
      <label>
        Seconds per turn
        <input type="number" name="turnSeconds" inputMode="numeric" required step={1}
          min={untimedAllowed ? 0 : 5} max={300} value={props.value} aria-describedby={hint}
          onInput={(e) => props.onInput(e.currentTarget.value)} />
      </label>
      <p id={hint} class="muted small field-hint">
        5 to 300 seconds; when it runs out the server moves for the player, and after two
        timeouts in a row a bot takes the seat until they take it back.
        {untimedAllowed ? " 0: no clock." : " A public table always has a clock."}
      </p>
    </>
  );
}

/** The level of a bot that stands in for an absent or leaving player. */
export function ReplacementBotField(props: { value: BotLevel; onChange: (value: BotLevel) => void }) {
  return (
    <label>
      Level of a bot that takes an absent player's seat
      <select name="replacementBot" value={props.value}
        onChange={(e) => props.onChange(e.currentTarget.value as BotLevel)}>
        {BOT_LEVELS.map((level) => <option key={level} value={level}>{botLevelName(level)}</option>)}
      </select>
    </label>
  );
}

/** The number typed in a turn-seconds field (the browser has checked its range). */
export const turnSecondsOf = (value: string): number => (value.trim() === "" ? DEFAULT_TURN_SECONDS : Number(value));
