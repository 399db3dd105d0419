/** What a request was answered: its status and body text. */
export interface Answer {
  status: number;
  body: string;
}

/**
 * Sends every request alone, one after another, then all of them `rounds` times at once, shuffled,
 * and returns both sets of answers (status and body text) in the order of `requests`: a route
 * that batches simultaneous reads into one statement must answer each as it answers it alone.
 *
 * @example
 * const { alone, together } = await aloneAndTogether([() => request("/a"), () => request("/b")], 5);
 */
export async function aloneAndTogether(requests: Array<() => Response | Promise<Response>>, rounds: number) {
  const answer = async (send: () => Response | Promise<Response>): Promise<Answer> => {
    const response = await send();
    return { status: response.status, body: await response.text() };
  };
  const alone: Answer[] = [];
  for (const send of requests) alone.push(await answer(send));
  const order = Array.from({ length: rounds }, () => requests.map((_, at) => at)).flat();
  for (let at = order.length - 1; at > 0; at--) {
    const other = Math.floor(Math.random() * (at + 1));
    [order[at], order[other]] = [order[other], order[at]];
  }
  const answers = await Promise.all(order.map((at) => answer(requests[at])));
  const together = requests.map((): Answer[] => []);
  order.forEach((at, position) => together[at].push(answers[position]));
  return { alone, together };
}
