/** The tokens a request used: what a backend reports and what is billed. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
}
