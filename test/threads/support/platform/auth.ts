/** The deployment's key check: every request must carry `x-api-key: LGTR_API_KEY` (a wrong key answers 401). */
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

export const auth = new Auth().authenticate(async (request: Request) => {
  if (request.headers.get("x-api-key") !== process.env.LGTR_API_KEY)
    throw new HTTPException(401, { message: "Invalid API key" });
  return { identity: "test", permissions: [] };
});
