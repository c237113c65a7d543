/**
 * The phrases that make observed text read as instructions to an agent, as a table. Rules for
 * English and the other Latin-script languages are matched on the text's Latin skeleton (lower
 * case, accents removed, look-alike letters of other scripts made Latin); rules for Russian,
 * Chinese, Japanese and Korean on the same text without the skeleton. Pure.
 */

export interface InstructionRule {
  name: string;
  pattern: RegExp;
}

/** Verbs that start a tool call ("call cancel_operation", "run the delete tool"). */
export const CALL_VERBS = "(?:call|invoke|run|execute|use|trigger|send|fetch)";

const OVERRIDE_VERB = "(?:ignore|disregard|forget|override|bypass|skip|discard|dismiss|neglect|abandon|set aside|pay no attention to|do not follow|don't follow|stop following)";
const OVERRIDE_NOUN = "(?:instructions?|prompts?|rules|directions?|guidelines|guidance|messages?|context|polic(?:y|ies)|commands?|orders|constraints|restrictions|safeguards|guardrails|programming|training)";
const ADDRESSEE = "(?:ai|llm|assistant|agent|model|chatbot|bot|claude|gpt|chatgpt|copilot)s?";
const DANGEROUS_COMMAND =
  "(?:sudo\\s+)?(?:rm\\s+-[a-z]*[rf]|curl\\b[^|\\n]{0,200}\\|\\s*(?:sudo\\s+)?(?:ba|z|da)?sh\\b|wget\\b[^|\\n]{0,200}\\|\\s*(?:sudo\\s+)?(?:ba|z)?sh\\b|chmod\\s+(?:-r\\s+)?777|mkfs|dd\\s+if=|del\\s+\\/[fsq]|format\\s+c:|:\\(\\)\\s*\\{|shutdown\\b|reboot\\b|drop\\s+(?:table|database))";

/** Matched on the Latin skeleton: lower case, single spaces, no accents. */
export const LATIN_RULES: readonly InstructionRule[] = [
  { name: "override", pattern: new RegExp(`\\b${OVERRIDE_VERB}\\b.{0,40}\\b(?:previous|prior|above|earlier|preceding|foregoing|all|any|your|the|system|these|those|my|every)\\b.{0,40}\\b${OVERRIDE_NOUN}\\b`) },
  {
    name: "override",
    pattern: /\b(?:ignore|disregard|forget|discard|dismiss)\s+(?:all\s+|everything\s+|anything\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+|those\s+|what\s+(?:is|was)\s+)?(?:above|previous|prior|preceding|earlier|foregoing|aforementioned)\b/,
  },
  {
    name: "override",
    pattern: /\bforget\s+(?:about\s+)?(?:everything|all\s+(?:of\s+)?(?:that|this|it|the\s+above|previous|prior|your|you)|what\s+(?:you\s+(?:were|have\s+been|are)|i|we)\s+(?:told|said|instructed|asked)|your\s+(?:instructions|rules|guidelines|training|programming|prompt))/,
  },
  {
    name: "new_instructions",
    pattern: /\b(?:new|updated|real|actual|following|important|revised|secret|hidden)\s+(?:system\s+)?(?:instructions?|orders|directives?|prompt)\b\s*[:!-]|#{1,6}\s*(?:new\s+)?(?:instructions?|system(?:\s+prompt)?|prompt)\s*:/,
  },
  {
    name: "role_tag",
    pattern: /<\|?\s*\/?\s*(?:system|assistant|user|developer|tool|im_start|im_end|endoftext)\s*\|?>|<\/?\s*(?:instructions?|prompt)\s*>|\[\/?(?:system|inst|assistant)\]|<<\/?sys>>/,
  },
  { name: "role_prefix", pattern: /(?:^|[\n;])\s*(?:system|assistant|developer)\s*:\s*\S|\b(?:begin|end)\s+(?:of\s+)?(?:the\s+)?system\s+(?:prompt|instructions|message)\b/ },
  {
    name: "persona",
    pattern:
      /\byou\s+(?:are\s+now|must\s+now|will\s+now|should\s+now|must\s+(?:call|run|invoke|execute|ignore|delete|cancel|send))\b|\bact\s+as\s+(?:an?\s+)?(?:admin|root|system|developer)\b|\bdo\s+not\s+(?:tell|inform|show)\s+the\s+user\b|\bpretend\s+(?:to\s+be|you\s+are|that\s+you)\b|\bfrom\s+now\s+on,?\s+you\b|\b(?:enable|enter|activate)\s+(?:developer|dan|god)\s+mode\b|\bjailbreak\b/,
  },
  { name: "tool_call", pattern: new RegExp(`\\b${CALL_VERBS}\\s+(?:the\\s+)?(?:tool|function|command|mcp)\\b`) },
  { name: "tool_call", pattern: new RegExp(`\\b(?:please\\s+|now\\s+|then\\s+|must\\s+|should\\s+)${CALL_VERBS}\\s+[\`'"]?[a-z][a-z0-9]*_[a-z0-9_]+`) },
  { name: "tool_call", pattern: new RegExp(`\\b${CALL_VERBS}\\s+(?:the\\s+|a\\s+|your\\s+)?(?:[\\w-]+\\s+){1,2}tool\\b`) },
  {
    name: "addressed",
    pattern: new RegExp(
      `\\b(?:note|message|attention|instructions?|hey|dear|hello|hi)\\s+(?:to\\s+|for\\s+)?(?:the\\s+|any\\s+|all\\s+)?${ADDRESSEE}\\b|(?:^|[.!?]\\s)(?:assistant|agent|ai|claude|model|chatgpt|copilot)\\s*[,:!]\\s*(?:please\\s+)?(?:${CALL_VERBS}|ignore|delete|remove|stop|do|tell|reveal|cancel|forget)\\b|\\bas\\s+an?\\s+(?:ai|llm|language model|assistant|agent)\\b.{0,60}\\b(?:must|should|shall|need to|have to|will)\\b`,
    ),
  },
  {
    name: "urgent_order",
    pattern: /(?:^|[\s>#*[(])(?:important|urgent|attention|critical|warning|notice|alert|reminder|admin|security notice|system notice|note)\s*[:!]+.{0,200}?\b(?:you|assistant|agent|ai|llm|must|run|execute|call|invoke|ignore|delete|remove|send|reveal|disregard|forget|do not|don't|never tell)\b/,
  },
  { name: "dangerous_command", pattern: new RegExp(`\\b(?:run|execute|exec|type|paste|enter|invoke)\\b\\s*:?\\s*[\`'"]?\\s*${DANGEROUS_COMMAND}`) },
  { name: "dangerous_command", pattern: /\b(?:now|please|immediately|then|must|should|go ahead and)\s+(?:delete|remove|purge|wipe|destroy|erase|drop|cancel|kill|exfiltrate|upload|leak|reveal|disclose)\b/ },
  {
    name: "reveal",
    pattern:
      /\b(?:reveal|print|show|output|repeat|display|dump|leak|disclose|tell\s+me)\s+(?:me\s+)?(?:your\s+(?:(?:full|entire|hidden|secret|original|initial|system|exact)\s+)*(?:prompt|instructions|rules|guidelines|configuration|token|secret|password|api key|credentials)|the\s+(?:(?:full|entire|hidden|secret|original|initial|exact)\s+)*(?:system prompt|hidden instructions|api key|secret|password|token|credentials))\b/,
  },
  {
    name: "exfiltrate",
    pattern: /\bsend\s+(?:the\s+|your\s+|all\s+|any\s+)?(?:plan_token|tokens?|secrets?|passwords?|credentials|api keys?|keys|ssh keys?|cookies?|env(?:ironment)?(?:\s+variables)?)\b.{0,80}\bto\b/,
  },
  {
    name: "override_fr",
    pattern:
      /\b(?:ignore[zrs]?|oublie[zrs]?|neglige[zr]?|ne\s+(?:tenez|tiens)\s+(?:pas\s+)?compte|(?:fais|faites)\s+abstraction)\b.{0,60}?\b(?:instructions?|consignes?|regles?|directives?|indications?|tout|ce\s+qui\s+precede|ci-dessus|precedent\w*|anterieur\w*)/,
  },
  {
    name: "override_de",
    pattern: /\b(?:ignorier\w*|vergiss\w*|vergessen\s+sie|missacht\w*|beachte\s+nicht|ubergeh\w*)\b.{0,60}?\b(?:anweisung\w*|instruktion\w*|befehl\w*|regeln|vorgaben|alles|obige\w*|vorherige\w*|bisherige\w*)/,
  },
  {
    name: "override_es",
    pattern: /\b(?:ignora\w*|olvida\w*|omite|omitir|(?:haz|hagan?|haga)\s+caso\s+omiso|no\s+hagas\s+caso|descarta\w*)\b.{0,60}?\b(?:instrucciones|indicaciones|reglas|ordenes|directrices|todo|anteriores|previas)/,
  },
  { name: "override_it", pattern: /\b(?:ignora\w*|dimentica\w*|trascura\w*|non\s+considerare)\b.{0,60}?\b(?:istruzioni|regole|indicazioni|tutto|precedenti)/ },
  { name: "override_pt", pattern: /\b(?:ignor[ae]\w*|esquec\w*|esqueca\w*|desconsider\w*)\b.{0,60}?\b(?:instrucoes|regras|orientacoes|tudo|anteriores)/ },
];

/** Matched on the text without the skeleton (lower case, single spaces, no accents): other scripts. */
export const OTHER_SCRIPT_RULES: readonly InstructionRule[] = [
  {
    name: "override_ru",
    pattern: /(?:проигнорир|игнорир|забуд|не\s+обраща|пренебрег|отбрось|отбросьте)\p{L}*[\s\S]{0,60}?(?:инструкци|указани|правил|команд|все(?!\p{L})|сказанн|предыдущ|выше)/u,
  },
  {
    name: "override_zh",
    pattern:
      /(?:忽略|无视|無視|忽视|忽視|不要理会|不要理會|别管|別管|忘记|忘記|忘掉|抛开|拋開|跳过|跳過|不要遵守|不要遵循)[^。！？.!?]{0,20}?(?:指令|指示|说明|說明|提示词|提示詞|提示|规则|規則|命令|设定|設定|约束|約束|限制|要求)|(?:忽略|无视|無視|忘记|忘記|忘掉)(?:你|您)?(?:之前|以上|上面|先前|前面|上述)/u,
  },
  { name: "tool_call_zh", pattern: /(?:调用|調用|执行|執行|运行|運行|使用)[^。！？]{0,10}?(?:工具|函数|函數)/u },
  { name: "override_ja", pattern: /(?:指示|命令|ルール|指令|プロンプト|設定)[^。]{0,20}?(?:無視|忘れ)|(?:無視|忘れ)[^。]{0,10}?(?:指示|命令|ルール)/u },
  { name: "override_ko", pattern: /(?:이전|위의|앞의|앞선|기존)[^.!?]{0,20}?(?:지시|명령|지침|규칙|프롬프트)[^.!?]{0,20}?(?:무시|잊)/u },
];

/** Matched on the letters alone, once spaced-out letters were joined ("i g n o r e p r e v i o u s…"). */
export const COMPACT_RULES: readonly InstructionRule[] = [
  {
    name: "override",
    pattern:
      /ignore(?:all|any|the|your|my|every)*(?:previous|prior|above|earlier|preceding)(?:instructions?|prompts?|rules|directions|messages|context)|disregard(?:all|the|any|your|every)*(?:previous|prior|above|earlier|instructions?|everything)|forget(?:everything|allprevious|allprior|allinstructions|your(?:instructions|rules)|whatyou)/,
  },
  { name: "persona", pattern: /youarenow|donottelltheuser|actasroot|actasadmin/ },
  { name: "new_instructions", pattern: /newinstructions|systemprompt/ },
];

/**
 * Words of which every Latin rule needs at least one (with `<`, `[`, `#` or `:` for the tags and
 * role prefixes): a string holding none is data without running the rules.
 */
export const TRIGGER_WORDS: ReadonlySet<string> = new Set(
  (
    "ignore disregard forget override bypass skip discard dismiss neglect abandon aside attention follow following instruction instructions order orders " +
    "directive directives prompt prompts system assistant developer user tool im_start im_end endoftext inst sys you act pretend jailbreak mode " +
    "call invoke run execute exec use trigger send fetch important urgent critical warning notice alert reminder admin note message hey dear hello hi " +
    "ai llm agent model chatbot bot claude gpt chatgpt copilot sudo rm curl wget chmod mkfs dd del format shutdown reboot drop delete remove purge wipe " +
    "destroy erase cancel kill exfiltrate upload leak reveal print show output repeat display dump disclose tell now please then must should immediately " +
    "begin end new updated real actual revised secret hidden type paste enter oublie oubliez tenez tiens abstraction neglige negligez vergiss vergessen " +
    "missachte beachte ignoriere ignorieren olvida olvides omite omitir caso descarta ignora ignorar dimentica trascura esqueca esquece desconsidere"
  ).split(" "),
);
/** Word beginnings that trigger the rules too (inflected forms). */
export const TRIGGER_PREFIX = /^(?:ignor|disregard|forget|overrid|instruc|oubli|vergi|missacht|olvid|dimentic|esquec|desconsider|anweis|neglig)/;
