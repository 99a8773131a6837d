/**
 * Text written by someone else (a mail's subject, a swarm task's subject, a team member's name,
 * a registry's descriptions and tags),
 * made safe to print on a terminal as part of one of troupe's lines: escape sequences (CSI, OSC,
 * DCS and the like) removed whole, every other control character and line break folded into one
 * space, so the text can neither drive the terminal nor forge a line of its own.
 */
export function printable(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, ' ').replace(/ {2,}/g, ' ').trim();
}

/**
 * The same for a message of several lines that may quote such text (an error naming a file or a
 * key someone else wrote): each line made safe, the lines and their indentation kept.
 */
export function printableLines(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, ' ').trimEnd())
    .join('\n');
}

// OSC/DCS/SOS/PM/APC strings end at BEL or ST (ESC \); CSI ends at a final byte; the rest are ESC + one byte.
const ESCAPE_SEQUENCE =
  /\u001b[\]PX^_][\s\S]*?(?:\u0007|\u001b\\|$)|(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|\u001b[ -/]*[0-~]|[\u0090\u009d\u009e\u009f][\s\S]*?(?:\u0007|\u009c|$)/g;
// C0, DEL, C1, and the Unicode line and paragraph separators
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
