import { useState } from "preact/hooks";
import { SignInDocument, SignUpDocument } from "../../graphql/generated";
import { useSignal } from "../../lib/signal";
import { mutate, saveToken, signedOutBecause } from "../../server/api";

// The server's rules for a new account (a shorter password is refused).
const MIN_PASSWORD = 8;

/** Sign up or sign in: the token is kept in this browser's local storage. */
export function Auth() {
  const [mode, setMode] = useState<"in" | "up">("up");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const goodbye = useSignal(signedOutBecause);

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const result =
      mode === "up"
        ? await mutate(SignUpDocument, { username, password }).then((r) => (r.data ? { data: r.data.signUp } : r))
        : await mutate(SignInDocument, { username, password }).then((r) => (r.data ? { data: r.data.signIn } : r));
    setBusy(false);
    if (result.data) {
      signedOutBecause.value = null;
      saveToken(result.data.token, result.data.player);
    } else setError(result.error);
  };

  return (
    <section class="auth panel" aria-labelledby="auth-title">
      <h1 id="auth-title">{mode === "up" ? "Create an account" : "Sign in"}</h1>
      <p class="muted">Partnership Spades with Nil, Blind Nil and bags, live with friends or bots.</p>
      {goodbye && <p class="error signed-out" role="alert">{goodbye}</p>}
      {/* A new form for each mode: the sign-up rules' attributes do not linger on sign-in. */}
      <form key={mode} onSubmit={(e) => void submit(e)}>
        <label>
          Username
          <input name="username" autocomplete="username" required value={username}
            minLength={mode === "up" ? 3 : undefined} maxLength={mode === "up" ? 20 : undefined}
            pattern={mode === "up" ? "[A-Za-z0-9_\\-]+" : undefined}
            aria-describedby={mode === "up" ? "username-rule" : undefined}
            onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        {mode === "up" && <p id="username-rule" class="muted small field-hint">3 to 20 letters, digits, _ or -.</p>}
        <label>
          Password
          <input name="password" type="password" required value={password}
            autocomplete={mode === "up" ? "new-password" : "current-password"}
            minLength={mode === "up" ? MIN_PASSWORD : undefined}
            aria-describedby={mode === "up" ? "password-rule" : undefined}
            onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        {mode === "up" && <p id="password-rule" class="muted small field-hint">At least {MIN_PASSWORD} characters.</p>}
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" class="primary" disabled={busy}>{mode === "up" ? "Sign up" : "Sign in"}</button>
      </form>
      <p>
        {mode === "up" ? "Already have an account? " : "New here? "}
        <button type="button" class="linkish" onClick={() => { setMode(mode === "up" ? "in" : "up"); setError(null); }}>
          {mode === "up" ? "Sign in" : "Create an account"}
        </button>
      </p>
    </section>
  );
}
