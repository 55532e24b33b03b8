import type { AptixClient } from "@aptix/client";
import type { FinalResponse } from "@aptix/contracts";

/** The text of each file a final answer produced, by name. */
export async function downloadFiles(client: AptixClient, answer: FinalResponse) {
  const texts = new Map<string, string>();
  for (const file of answer.files ?? []) {
    const content = await client.files.get(file);
    if (!content.successful) throw new Error(`${file.name}: ${content.errors[0].message}`);
    texts.set(file.name, new TextDecoder().decode(content.result.bytes));
  }
  return texts;
}
