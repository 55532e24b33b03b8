import { lazy, Suspense, useEffect, useState } from "react";
import { storeApiKey, storedApiKey } from "./api-key.js";
import { type Connection, ConnectionContext, connect } from "./connection.js";
import { KeyForm } from "./key-form.js";
import { ServicePage } from "./pages/service-page.js";
import { SessionPage } from "./pages/session-page.js";
import { SessionsPage } from "./pages/sessions-page.js";
import { hrefOf, type Route, useRoute } from "./route.js";

// The two pages with large libraries (the AI SDK, the chart) load when first opened.
const ChatPage = lazy(() => import("./pages/chat-page.js").then(({ ChatPage }) => ({ default: ChatPage })));
const UsagePage = lazy(() =>
  import("./pages/usage-page.js").then(({ UsagePage }) => ({ default: UsagePage })),
);

/** Whether the service asks for a key: in local mode a request without one is answered. */
type Access = { state: "probing" } | { state: "local" } | { state: "key"; apiKey: string | undefined };

const LINKS: [string, Route][] = [
  ["Sessions", { page: "sessions" }],
  ["New chat", { page: "chat" }],
  ["Usage", { page: "usage" }],
  ["Service", { page: "service" }],
];

export function App() {
  const route = useRoute();
  const [access, setAccess] = useState<Access>({ state: "probing" });
  useEffect(() => {
    connect(undefined)
      .client.sessions.list({ limit: 1 })
      .then(
        (result) =>
          setAccess(result.successful ? { state: "local" } : { state: "key", apiKey: storedApiKey() }),
        () => setAccess({ state: "key", apiKey: storedApiKey() }),
      );
  }, []);
  const apiKey = access.state === "key" ? access.apiKey : undefined;
  const [connection, setConnection] = useState<Connection>();
  useEffect(() => {
    if (access.state === "local" || apiKey !== undefined) setConnection(connect(apiKey));
  }, [access.state, apiKey]);

  const signOut = () => {
    storeApiKey(undefined);
    setConnection(undefined);
    setAccess({ state: "key", apiKey: undefined });
  };
  return (
    <>
      <header>
        <span className="brand">Aptix console</span>
        <nav aria-label="Console">
          {LINKS.map(([label, target]) => (
            <a key={label} href={hrefOf(target)} aria-current={samePage(route, target) ? "page" : undefined}>
              {label}
            </a>
          ))}
        </nav>
        {apiKey !== undefined && (
          <button type="button" className="quiet" onClick={signOut}>
            Forget key
          </button>
        )}
      </header>
      <main>
        {access.state === "probing" && <p aria-busy="true">Connecting…</p>}
        {access.state === "key" && apiKey === undefined && (
          <KeyForm
            onKey={(key) => {
              storeApiKey(key);
              setAccess({ state: "key", apiKey: key });
            }}
          />
        )}
        {connection && (
          <ConnectionContext.Provider value={connection}>
            <Suspense fallback={<p aria-busy="true">Loading…</p>}>
              <Page route={route} />
            </Suspense>
          </ConnectionContext.Provider>
        )}
      </main>
    </>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "sessions":
      return <SessionsPage />;
    case "session":
      return <SessionPage key={route.sessionId} sessionId={route.sessionId} />;
    case "chat":
      return <ChatPage key={route.sessionId ?? "new"} sessionId={route.sessionId} />;
    case "usage":
      return <UsagePage />;
    case "service":
      return <ServicePage />;
  }
}

function samePage(route: Route, target: Route): boolean {
  return route.page === target.page || (route.page === "session" && target.page === "sessions");
}
