// What lmgate reads from an Anthropic upstream is checked first: a malformed message or
// event is turned away (the exchange then reports a bad answer), never half-read.
import { describe, expect, it } from 'vitest';
import { isAnthropicMessage, parseAnthropicEvent } from '../../src/anthropic/wire-readers.js';

const MESSAGE = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude',
  content: [{ type: 'text', text: 'hi', citations: null }, { type: 'tool_use', id: 't', name: 'f', input: {} }, { type: 'server_tool_use', id: 's' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: null },
};

describe('isAnthropicMessage', () => {
  it('takes a message with blocks it reads and kinds it skips, and turns away broken ones', () => {
    expect(isAnthropicMessage(MESSAGE)).toBe(true);
    expect(isAnthropicMessage({ ...MESSAGE, type: 'chat.completion' })).toBe(false);
    expect(isAnthropicMessage({ ...MESSAGE, content: [{ type: 'text' }] })).toBe(false);
    expect(isAnthropicMessage({ ...MESSAGE, content: [{ type: 'tool_use', id: 't', name: 'f', input: '{}' }] })).toBe(false);
    expect(isAnthropicMessage({ ...MESSAGE, usage: { input_tokens: -1, output_tokens: 2 } })).toBe(false);
    expect(isAnthropicMessage({ ...MESSAGE, usage: { input_tokens: 1, output_tokens: 2.5 } })).toBe(false);
  });
});

describe('parseAnthropicEvent', () => {
  it('reads each event kind, and lets unknown kinds through to be skipped', () => {
    expect(parseAnthropicEvent('{"type":"ping"}')).toEqual({ type: 'ping' });
    expect(parseAnthropicEvent('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}')).toMatchObject({ type: 'content_block_delta' });
    expect(parseAnthropicEvent('{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}')).toMatchObject({ type: 'message_delta' });
    expect(parseAnthropicEvent('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')).toMatchObject({ type: 'error' });
    expect(parseAnthropicEvent('{"type":"something_new","x":1}')).toEqual({ type: 'something_new', x: 1 });
  });

  it('turns away what is not JSON, or an event missing what is read from it', () => {
    for (const data of [
      '{"type":"message_start"',
      '[1]',
      '{"no":"type"}',
      '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":"1","output_tokens":0}}}',
      '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t"}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":{}}}',
      '{"type":"message_delta","delta":{"stop_reason":null},"usage":{}}',
      '{"type":"error","error":"overloaded"}',
    ]) {
      expect(parseAnthropicEvent(data)).toBeUndefined();
    }
  });
});
