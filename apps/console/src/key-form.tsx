import { type FormEvent, useState } from "react";
import { connect } from "./connection.js";

/** Asks for an API key and keeps it only once the service accepts it. */
export function KeyForm({ onKey }: { onKey: (apiKey: string) => void }) {
  const [error, setError] = useState<string>();
  const [checking, setChecking] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const apiKey = String(new FormData(event.currentTarget).get("apiKey") ?? "").trim();
    if (apiKey === "") return setError("Enter the API key the service was given.");
    setChecking(true);
    const result = await connect(apiKey)
      .client.sessions.list({ limit: 1 })
      .finally(() => setChecking(false));
    if (result.successful) onKey(apiKey);
    else setError(`${result.errors[0].code}: ${result.errors[0].message}`);
  };
  return (
    <form className="key-form" onSubmit={submit}>
      <h1>Sign in</h1>
      <p>This service asks for an API key. It is kept in this tab only and sent to this service alone.</p>
      <label>
        API key
        <input name="apiKey" type="password" autoComplete="off" required />
      </label>
      <button type="submit" disabled={checking}>
        Use key
      </button>
      {error && <p role="alert">{error}</p>}
    </form>
  );
}
