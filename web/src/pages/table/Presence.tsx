/** A human seat's connection in words (and a shape), never by colour alone. */
export function PresenceTag({ connected }: { connected: boolean | null }) {
  if (connected === null) return null;
  return (
    <span class={`presence ${connected ? "presence-on" : "presence-off"}`}
      data-presence={connected ? "connected" : "disconnected"}>
      <span aria-hidden="true">{connected ? "● " : "○ "}</span>
      {connected ? "connected" : "disconnected"}
    </span>
  );
}
