import { type StepObject, step } from "@aptix/testing-llm-servers";

/** A scripted provider answer given only once `open` is called: the turn asking it runs until then. */
export function gatedAnswer(text: string): { open: () => void; step: () => Promise<StepObject> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    open,
    step: async () => {
      await opened;
      return step.text(text);
    },
  };
}
