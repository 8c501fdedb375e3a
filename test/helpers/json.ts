/**
 * A response body parsed as JSON, typed loosely on purpose: tests assert its exact shape
 * with `toEqual`/`toMatchObject`, which is the check that matters.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type LooseJson = any;

export async function jsonOf(res: Response): Promise<LooseJson> {
  return res.json();
}
