/** Type-level checks for the signature blocks of the docs: `Same<A, B>` is true when each is assignable to the other. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
