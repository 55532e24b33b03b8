import { useEffect, useState } from "react";

/** The console's pages, addressed by the URL's fragment so the server serves one file for all of them. */
export type Route =
  | { page: "sessions" }
  | { page: "session"; sessionId: string }
  | { page: "chat"; sessionId?: string }
  | { page: "usage" }
  | { page: "service" };

function parseRoute(hash: string): Route {
  const [page = "", id] = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (page === "sessions" && id) return { page: "session", sessionId: id };
  if (page === "chat") return id ? { page: "chat", sessionId: id } : { page: "chat" };
  if (page === "usage" || page === "service") return { page };
  return { page: "sessions" };
}

export function hrefOf(route: Route): string {
  switch (route.page) {
    case "session":
      return `#/sessions/${encodeURIComponent(route.sessionId)}`;
    case "chat":
      return route.sessionId ? `#/chat/${encodeURIComponent(route.sessionId)}` : "#/chat";
    default:
      return `#/${route.page}`;
  }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return route;
}
