// Reading a chat backend's answer for an API translated to chat (completions, responses):
// the text and finish reason of each choice, from a whole `chat.completion` or from one
// `chat.completion.chunk`, whoever wrote it (a demo model, an upstream).
import { isRecord } from './upstream/wire.js';

export interface ChoiceText {
  index: number;
  text: string;
  finishReason: string | null;
}

export interface ChatAnswer {
  id: string;
  createdUnixSec: number;
  choices: ChoiceText[];
}

/** A whole chat.completion's JSON text. */
export function readChatCompletion(body: string): ChatAnswer {
  return readAnswer(JSON.parse(body), 'message');
}

/** One chat.completion.chunk's JSON text. */
export function readChatChunk(json: string): ChatAnswer {
  return readAnswer(JSON.parse(json), 'delta');
}

function readAnswer(answer: unknown, field: 'message' | 'delta'): ChatAnswer {
  const record = isRecord(answer) ? answer : {};
  const choices: ChoiceText[] = [];
  for (const choice of Array.isArray(record.choices) ? record.choices : []) {
    if (!isRecord(choice)) continue;
    const part = choice[field];
    const content = isRecord(part) ? part.content : undefined;
    choices.push({
      index: typeof choice.index === 'number' ? choice.index : 0,
      text: typeof content === 'string' ? content : '',
      finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
    });
  }
  return {
    id: typeof record.id === 'string' ? record.id : '',
    createdUnixSec: typeof record.created === 'number' ? record.created : Math.floor(Date.now() / 1000),
    choices,
  };
}
