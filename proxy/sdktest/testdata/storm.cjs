// One call with an official SDK's default retries; prints what it ended
// with. Usage: node storm.cjs openai|anthropic BASE_URL
const [sdk, base] = process.argv.slice(2);
async function main() {
  try {
    if (sdk === "openai") {
      const OpenAI = require("openai");
      const client = new OpenAI({ baseURL: base + "/v1", apiKey: "sk-client" });
      await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    } else {
      const Anthropic = require("@anthropic-ai/sdk");
      const client = new Anthropic({ baseURL: base, apiKey: "sk-client" });
      await client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] });
    }
    console.log(JSON.stringify({ status: 200 }));
  } catch (e) {
    console.log(JSON.stringify({ status: e.status ?? 0, message: String(e.message).slice(0, 200) }));
  }
}
main();
