// Ready-to-paste calls for the quick start. The key stays a placeholder: secrets are shown
// only once, when a key is generated.
export const KEY_PLACEHOLDER = 'YOUR_API_KEY';

export function curlSnippet(baseUrl: string, model: string): string {
  return `curl ${baseUrl}/chat/completions \\
  -H "Authorization: Bearer ${KEY_PLACEHOLDER}" \\
  -H "Content-Type: application/json" \\
  -d '{
    "model": "${model}",
    "messages": [{"role": "user", "content": "Hello!"}]
  }'`;
}

export function pythonSnippet(baseUrl: string, model: string): string {
  return `from openai import OpenAI

client = OpenAI(
    base_url="${baseUrl}",
    api_key="${KEY_PLACEHOLDER}",
)

completion = client.chat.completions.create(
    model="${model}",
    messages=[{"role": "user", "content": "Hello!"}],
)
print(completion.choices[0].message.content)`;
}

export function javascriptSnippet(baseUrl: string, model: string): string {
  return `import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: '${baseUrl}',
  apiKey: '${KEY_PLACEHOLDER}',
});

const completion = await client.chat.completions.create({
  model: '${model}',
  messages: [{ role: 'user', content: 'Hello!' }],
});
console.log(completion.choices[0].message.content);`;
}
