package redact

// This file holds our rules for the keys of the providers an
// OpenAI-compatible endpoint is likely to be, where the pinned gitleaks
// set has none. Gitleaks already covers, and these rules do not repeat:
// Perplexity (perplexity-api-key, pplx-…), Cohere (cohere-api-token, 40
// characters by a cohere/CO_API_KEY name), Google AI and Vertex
// (gcp-api-key, AIza…), Anthropic admin keys (anthropic-admin-api-key,
// sk-ant-admin01-…) and Hugging Face (huggingface-access-token, hf_…;
// huggingface-organization-api-token, api_org_…).
//
// A key with a distinctive prefix is found by it wherever it stands
// (gitleaks' "unique token" form: the prefix at a word start, a fixed
// alphabet and length, a word end). A key with none (32 or 64 hex digits,
// 32 letters and digits) is found only as the value of a name that says
// whose it is (gitleaks' keyword template, keywordValue): a bare hex run
// is as likely a digest.
//
// The formats and where each is documented:
//   - OpenRouter: "sk-or-v1-" and 64 lower-case hex digits, the keys
//     openrouter.ai/keys issues (betterleaks rule openrouter-api-key;
//     trufflehog's openrouter detector).
//   - Groq: "gsk_" and 52 letters and digits (console.groq.com/keys;
//     betterleaks groq-api-key, nosey parker np.groq.1, kingfisher
//     kingfisher.groq.1).
//   - xAI: "xai-" and 70 to 120 letters, digits, '_' and '-' (80 or 84 in
//     the keys console.x.ai issues; betterleaks xai-api-key).
//   - Together AI: "tgp_v1_" and 43 letters, digits, '_' and '-' (the
//     current keys; betterleaks togetherai-api-key), and, before those,
//     64 hex digits, by a together…key name.
//   - Fireworks AI: "fw_" and 20 to 48 letters and digits (the keys
//     app.fireworks.ai issues, e.g. its docs' FIREWORKS_API_KEY=fw_…).
//   - DeepSeek: "sk-" and 32 hex digits, by a deepseek name
//     (platform.deepseek.com/api_keys; betterleaks deepseek-api-key: the
//     prefix alone is OpenAI's legacy one).
//   - Mistral: 32 letters and digits, by a mistral…key name
//     (console.mistral.ai; betterleaks mistral-api-key).
//   - Replicate: "r8_" and 37 letters and digits
//     (replicate.com/account/api-tokens; betterleaks replicate-api-token).
//   - Azure OpenAI (Azure AI services): 32 hex digits, by an azure…key name
//     (the "KEY 1"/"KEY 2" of a resource, AZURE_OPENAI_API_KEY), or the
//     84-character keys issued since 2024, 52 letters and digits then the
//     signature "JQQJ9" (Microsoft's security-utilities, pattern
//     SEC101/200, UnclassifiedLegacyCommonAnnotatedSecurityKey).

// keywordValue is gitleaks' keyword template (its generator's
// GenerateSemiGenericRegex, case-insensitive): an identifier holding one
// of the words, an assignment, then the secret.
func keywordValue(words, secret string) string {
	return `(?i)[\w.-]{0,50}?(?:` + words + `)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(` +
		secret + `)(?:[\x60'"\s;]|\\[nr]|$)`
}

// keyNamed is keywordValue for a secret that is only letters and digits
// (hex digits, at worst): the name must also say "key" or "token" within
// 12 identifier bytes after the word ("together_api_key", "MISTRAL_API_KEY",
// "AZURE_OPENAI_API_KEY"), since "merged together: <sha256>" or "azure
// blob md5: <32 hex>" name a digest. It keeps what may stand between the
// word and the assignment within the template's 20 bytes, which
// templateTail's quick check assumes.
func keyNamed(words, secret string) string {
	return `(?i)[\w.-]{0,50}?(?:` + words + `)(?:[\w.-]{0,12}?(?:key|token)[\w.-]{0,3})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(` +
		secret + `)(?:[\x60'"\s;]|\\[nr]|$)`
}

// tokenEnd ends a key whose alphabet holds '-' and '_' (so \b cannot end
// it): a byte outside the alphabet, or the end.
const tokenEnd = `(?:[^A-Za-z0-9_-]|$)`

var providerRules = []ruleSpec{
	{ID: "openrouter-api-key", Regex: `\b(sk-or-v1-[a-f0-9]{64})\b`, Entropy: 3, Keywords: []string{"sk-or-v1-"}},
	{ID: "groq-api-key", Regex: `\b(gsk_[a-zA-Z0-9]{52})\b`, Entropy: 3.5, Keywords: []string{"gsk_"}},
	{ID: "xai-api-key", Regex: `\b(xai-[a-zA-Z0-9_-]{70,120})` + tokenEnd, Entropy: 3.5, Keywords: []string{"xai-"}},
	{ID: "togetherai-api-key", Regex: `\b(tgp_v1_[a-zA-Z0-9_-]{43})` + tokenEnd, Entropy: 3, Keywords: []string{"tgp_v1_"}},
	{ID: "togetherai-legacy-api-key", Regex: keyNamed("together", `[a-f0-9]{64}`), Entropy: 3, Keywords: []string{"together"}},
	{
		ID: "fireworks-api-key", Regex: `\b(fw_[a-zA-Z0-9]{20,48})\b`, Entropy: 3.5, Keywords: []string{"fw_"},
		// fw_ begins firmware identifiers too: a camelCase run of words
		// (fw_updateFirmwareVersion) is a name, not a random key.
		Allow: []allowSpec{{Regexes: []string{`^fw_[a-z]+(?:[A-Z][a-z]+)+$`}}},
	},
	{ID: "deepseek-api-key", Regex: keywordValue("deepseek", `sk-[a-f0-9]{32}`), Entropy: 3, Keywords: []string{"deepseek"}},
	{ID: "mistral-api-key", Regex: keyNamed("mistral", `[a-z0-9]{32}`), Entropy: 3.5, Keywords: []string{"mistral"}},
	{ID: "replicate-api-token", Regex: `\b(r8_[a-zA-Z0-9]{37})\b`, Entropy: 3, Keywords: []string{"r8_"}},
	{ID: "azure-openai-api-key", Regex: keyNamed("azure", `[a-f0-9]{32}`), Entropy: 3, Keywords: []string{"azure"}},
	{
		ID:       "azure-ai-services-key",
		Regex:    `\b([a-zA-Z0-9]{52}JQQJ9[9DH][a-zA-Z0-9][A-L][a-zA-Z0-9]{16}[a-zA-Z][a-zA-Z0-9]{7})\b`,
		Entropy:  3.5,
		Keywords: []string{"jqqj9"},
	},
}
