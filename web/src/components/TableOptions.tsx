import { useId } from "preact/hooks";
import type { BotLevel, Visibility } from "../graphql/generated";
import { BOT_LEVELS, botLevelName } from "../lib/cards";

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
