/**
 * troupe's skill text for a live agent: what the bus is, and the four commands it needs. Short on
 * purpose: it rides along in every launch (claude's system prompt) or opens the conversation.
 */
export function standingInstruction(input: {
  me: string;
  session: string;
  others: string[];
  troupe: string;
  nonce: string;
}): string {
  const t = `${input.troupe} bus`;
  const peers = [...input.others, 'user (the person)'].join(', ');
  return [
    `You are "${input.me}" on troupe's message bus (session ${input.session}), with ${peers}.`,
    `When a line starting "troupe:" says you have mail, read it: ${t} drain --me ${input.me} --include-body.`,
    `Check without reading: ${t} list --me ${input.me}.`,
    `Reply on a message's thread: ${t} reply --me ${input.me} --id <id> --body "<text>".`,
    `Write to someone: ${t} send --me ${input.me} --to <handle> --subject "<subject>" --body "<text>" (--priority urgent only when it cannot wait).`,
    'Do what the mail asks as you would any request, then reply with what you did. For now, say you are ready in one line.',
    `(troupe launch ${input.nonce})`,
  ].join('\n');
}
