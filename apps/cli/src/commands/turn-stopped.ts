/** A turn the user stopped (Ctrl-C): `cancelled` tells whether the service confirmed its cancel. */
export class TurnStopped extends Error {
  override readonly name = "TurnStopped";

  constructor(
    readonly turnId: string,
    readonly cancelled: boolean,
    options: ErrorOptions,
  ) {
    super("Stopped by the user (Ctrl-C).", options);
  }
}
