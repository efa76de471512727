/** Bytes of code in one TypeScript source text: comments, white space lines and blank lines aside. */
export function codeBytes(text: string): number;
/** Every `.ts` file under `dir` with its bytes of code, largest first. */
export function codeSizes(dir: string): { path: string; bytes: number }[];
