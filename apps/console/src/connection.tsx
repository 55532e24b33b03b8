import { AptixClient } from "@aptix/client";
import { createContext, useContext } from "react";

/** The service the page came from, and the key its requests carry (none in local mode). */
export interface Connection {
  client: AptixClient;
  /** `Authorization` for requests the client does not make (`/readyz`, `/v1/chat`); empty in local mode. */
  headers: Record<string, string>;
}

export function connect(apiKey: string | undefined): Connection {
  return {
    client: new AptixClient({ baseUrl: window.location.origin, ...(apiKey ? { apiKey } : {}) }),
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
  };
}

export const ConnectionContext = createContext<Connection | undefined>(undefined);

export function useConnection(): Connection {
  const connection = useContext(ConnectionContext);
  if (!connection) throw new Error("useConnection outside a ConnectionContext");
  return connection;
}
