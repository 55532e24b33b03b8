import type { MouseEvent } from "react";
import { useConnection } from "./connection.js";

/**
 * A link to a file the model produced. The file route wants the API key, which a plain link cannot send: the
 * file is fetched with it and handed to the browser as a download. It is fetched from this origin, whatever host
 * the file's url names (the service's public address), as the page may call no other.
 */
export function FileLink({ url, name }: { url: string; name: string }) {
  const { headers } = useConnection();
  const download = async (event: MouseEvent<HTMLAnchorElement>) => {
    event.preventDefault();
    const response = await fetch(new URL(url, window.location.origin).pathname, { headers });
    if (!response.ok) return;
    const objectUrl = URL.createObjectURL(await response.blob());
    const anchor = document.createElement("a");
    anchor.href = objectUrl;
    anchor.download = name;
    anchor.click();
    URL.revokeObjectURL(objectUrl);
  };
  return (
    <a href={url} download={name} onClick={download}>
      {name}
    </a>
  );
}
