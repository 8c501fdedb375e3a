// Filler prose for the lorem demo model: sentences from a small English grammar, in
// paragraphs, reproducible from a seed.

const NOUNS = [
  'system', 'garden', 'river', 'signal', 'pattern', 'journey', 'method', 'harbor', 'village',
  'process', 'language', 'archive', 'network', 'season', 'measure', 'question', 'answer',
  'balance', 'structure', 'window', 'morning', 'engine', 'library', 'version', 'detail',
  'project', 'direction', 'bridge', 'memory', 'practice', 'surface', 'principle', 'community',
  'instrument', 'landscape', 'conversation', 'framework', 'message', 'history', 'decision',
  'team', 'city', 'story', 'idea', 'road', 'market', 'forest', 'student', 'teacher', 'map',
];
const ADJECTIVES = [
  'quiet', 'careful', 'simple', 'steady', 'bright', 'ancient', 'modern', 'gentle', 'practical',
  'remarkable', 'subtle', 'familiar', 'distant', 'patient', 'open', 'curious', 'clear', 'vivid',
  'quick', 'reliable', 'narrow', 'generous', 'hidden', 'honest', 'early', 'shared', 'complex',
  'natural', 'useful', 'deliberate', 'important', 'small', 'larger', 'whole', 'unusual',
];
const VERBS = [
  'shape', 'follow', 'support', 'reveal', 'connect', 'carry', 'describe', 'improve', 'explore',
  'suggest', 'balance', 'gather', 'measure', 'guide', 'frame', 'change', 'reach', 'hold',
  'build', 'test', 'share', 'reflect', 'extend', 'shift', 'define', 'question', 'organize',
  'protect', 'notice', 'welcome', 'explain', 'open', 'keep', 'find', 'show', 'touch',
];
const ADVERBS = [
  'quietly', 'carefully', 'slowly', 'often', 'rarely', 'gradually', 'clearly', 'naturally',
  'easily', 'steadily', 'usually', 'eventually', 'simply', 'almost always', 'more than once',
];
const OPENERS = [
  'In practice,', 'Over time,', 'For that reason,', 'Meanwhile,', 'In many cases,', 'At first,',
  'Even so,', 'As a result,', 'On the other hand,', 'Still,', 'In the end,', 'Today,',
  'For most readers,', 'Seen from a distance,',
];
const JUDGEMENTS = [
  'clear', 'likely', 'important', 'true', 'possible', 'remarkable', 'obvious', 'worth noting',
  'no accident', 'easy to forget',
];
const PREPOSITIONS = [
  'across', 'within', 'through', 'beyond', 'along', 'under', 'around', 'behind', 'toward', 'near',
];

/** Writes English-looking prose: segments are whole sentences, paragraphs end in "\n\n". */
export class LoremWriter {
  private sentencesLeftInParagraph: number;
  private isParagraphStart = true;

  constructor(private readonly random: () => number) {
    this.sentencesLeftInParagraph = this.paragraphLength();
  }

  /**
   * The next sentence, with its leading space or trailing paragraph break. Breaks sit at
   * the end of a sentence (".\n\n", then "The ...") because that is where the tokenizer
   * splits the whole text too, so tokens counted per segment add up to the whole's.
   */
  nextSegment(): string {
    let segment = this.sentence();
    if (!this.isParagraphStart) segment = ' ' + segment;
    this.isParagraphStart = --this.sentencesLeftInParagraph === 0;
    if (this.isParagraphStart) {
      segment += '\n\n';
      this.sentencesLeftInParagraph = this.paragraphLength();
    }
    return segment;
  }

  private paragraphLength(): number {
    return 3 + Math.floor(this.random() * 4);
  }

  private sentence(): string {
    const r = this.random;
    switch (Math.floor(r() * 10)) {
      case 0:
        return `${capitalize(this.nounPhrase())} ${thirdPerson(this.pick(VERBS))} ${this.nounPhrase()} ${this.place()}.`;
      case 1:
        return `${this.pick(OPENERS)} ${this.nounPhrase()} ${thirdPerson(this.pick(VERBS))} ${this.nounPhrase()}.`;
      case 2:
        return `${capitalize(this.nounPhrase())} ${thirdPerson(this.pick(VERBS))} ${this.nounPhrase()}, and ${this.nounPhrase()} ${this.pick(ADVERBS)} ${thirdPerson(this.pick(VERBS))} ${this.nounPhrase()}.`;
      case 3:
        return `When ${this.nounPhrase()} ${thirdPerson(this.pick(VERBS))} ${this.nounPhrase()}, ${this.nounPhrase()} ${thirdPerson(this.pick(VERBS))} ${this.nounPhrase()} ${this.place()}.`;
      case 4:
        return `${capitalize(this.nounPhrase())} is ${this.pick(ADJECTIVES)}, but ${this.nounPhrase()} remains ${this.pick(ADJECTIVES)} ${this.place()}.`;
      case 5:
        return `It is ${this.pick(JUDGEMENTS)} that ${this.nounPhrase()} ${this.pick(ADVERBS)} ${thirdPerson(this.pick(VERBS))} ${this.nounPhrase()}.`;
      case 6:
        return `Why does ${this.nounPhrase()} ${this.pick(VERBS)} ${this.nounPhrase()} ${this.place()}?`;
      case 7:
        return `${capitalize(this.nounPhrase())} ${this.pick(ADVERBS)} ${thirdPerson(this.pick(VERBS))} ${this.nounPhrase()}, while ${this.nounPhrase()} ${thirdPerson(this.pick(VERBS))} ${this.nounPhrase()}.`;
      case 8:
        return `Not every ${this.pick(NOUNS)} ${thirdPerson(this.pick(VERBS))} ${this.nounPhrase()}; some simply ${this.pick(VERBS)} ${this.nounPhrase()} ${this.place()}.`;
      default:
        return `${this.pick(OPENERS)} ${this.nounPhrase()} can ${this.pick(VERBS)} ${this.nounPhrase()} without ${this.nounPhrase()}.`;
    }
  }

  private nounPhrase(): string {
    const noun = this.pick(NOUNS);
    switch (Math.floor(this.random() * 8)) {
      case 0:
        return `the ${noun}`;
      case 1:
        return `every ${noun}`;
      case 2:
        return withArticle(`${this.pick(ADJECTIVES)} ${noun}`);
      case 3:
        return `the ${noun} of the ${this.pick(NOUNS)}`;
      case 4:
        return `this ${this.pick(ADJECTIVES)} ${noun}`;
      case 5:
        return `our ${noun}`;
      case 6:
        return `each ${this.pick(ADJECTIVES)} ${noun}`;
      default:
        return `the ${this.pick(ADJECTIVES)} ${noun}`;
    }
  }

  private place(): string {
    return `${this.pick(PREPOSITIONS)} ${withArticle(`${this.pick(ADJECTIVES)} ${this.pick(NOUNS)}`)}`;
  }

  private pick(words: readonly string[]): string {
    return words[Math.floor(this.random() * words.length)] as string;
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function withArticle(phrase: string): string {
  return ('aeiou'.includes(phrase.charAt(0)) ? 'an ' : 'a ') + phrase;
}

/** "carry" → "carries", "reach" → "reaches", "shape" → "shapes". */
function thirdPerson(verb: string): string {
  if (/(s|x|z|ch|sh)$/.test(verb)) return verb + 'es';
  if (/[^aeiou]y$/.test(verb)) return verb.slice(0, -1) + 'ies';
  return verb + 's';
}

// Seeds: OpenAI's `seed` is any 64-bit integer; both halves and the choice index go into
// one 32-bit state so that each choice of a seeded request differs, reproducibly.
export function mixSeed(seed: number, choiceIndex: number): number {
  const low = seed >>> 0;
  const high = Math.floor(seed / 0x1_0000_0000) >>> 0;
  let h = low ^ Math.imul(high, 0x9e3779b1) ^ Math.imul(choiceIndex + 1, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** mulberry32: small, fast, and plenty for filler text (never for anything secret). */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
  };
}
