package config

import "strings"

// Agent is a sub-agent a route declares in its tools block (CONTRACT.md
// §13, specs/002 §3.5): the model consults it through the consult_agent
// tool, and it answers with a loop of its own against the same upstream,
// with its own system prompt and tools, whose stream the client sees
// nested in the call (skillpet agent_* events).
type Agent struct {
	// ID is the agent's code (specs/002 AgentInfo.id, tool_start
	// agentId): letters, digits, '_' and '-'; unique in the route.
	ID string `json:"id"`
	// Name is its display name (AgentInfo.name, agent_token agentName).
	// Default the id.
	Name string `json:"name,omitempty"`
	// Label is the consulting call's display label (tool_start label).
	// Default "咨询" and the name.
	Label string `json:"label,omitempty"`
	// Avatar is its avatar URL (tool_start agentAvatarUrl).
	Avatar string `json:"avatar,omitempty"`
	// Description tells the model what the agent is for.
	Description string `json:"description,omitempty"`
	// SystemPrompt are prompt files, SystemPromptText an inline prompt:
	// the agent's system prompt, joined as the route's are.
	SystemPrompt     []string `json:"system_prompt,omitempty"`
	SystemPromptText string   `json:"system_prompt_text,omitempty"`
	// Tools are the route's server tools the agent may call (by the names
	// the model sees). Default none: the agent only answers.
	Tools []string `json:"tools,omitempty"`
	// Model is the model its requests ask for. Default the route's.
	Model string `json:"model,omitempty"`
	// MaxRounds bounds its rounds with tool calls. Default 4.
	MaxRounds int `json:"max_rounds,omitempty"`
}

// ConsultTool is the tool the model consults the route's agents with.
const ConsultTool = "consult_agent"

// DefaultAgentRounds is an agent's MaxRounds when none is given.
const DefaultAgentRounds = 4

// Rounds returns MaxRounds, its default applied.
func (a *Agent) Rounds() int {
	if a.MaxRounds <= 0 {
		return DefaultAgentRounds
	}
	return a.MaxRounds
}

// DisplayName returns the name, else the id.
func (a *Agent) DisplayName() string {
	if a.Name != "" {
		return a.Name
	}
	return a.ID
}

// DisplayLabel returns the label, else "咨询" and the name.
func (a *Agent) DisplayLabel() string {
	if a.Label != "" {
		return a.Label
	}
	return "咨询" + a.DisplayName()
}

// checkAgents checks the tools block's agents and loads their prompts
// into prompts, by id.
func (t *ToolServers) checkAgents(root string, prompts map[string]string) error {
	seen := map[string]bool{}
	for i := range t.Agents {
		a := &t.Agents[i]
		setting := "tool_servers.agents[" + a.ID + "]"
		if !nameRe.MatchString(a.ID) {
			return errorf("tool_servers.agents", "tools: agent %q: an id is 1 to 64 letters, digits, '_' or '-'", a.ID)
		}
		if seen[a.ID] {
			return errorf(setting, "tools: agent %s: two agents have this id", a.ID)
		}
		seen[a.ID] = true
		if a.MaxRounds < 0 || a.MaxRounds > MaxMaxRounds {
			return errorf(setting+".max_rounds", "tools: agent %s: max_rounds: %d is out of range (1 to %d)", a.ID, a.MaxRounds, MaxMaxRounds)
		}
		for _, tool := range a.Tools {
			if tool == "" || tool == ConsultTool {
				return errorf(setting+".tools", "tools: agent %s: tools: %q cannot be an agent's tool (agents do not consult agents)", a.ID, tool)
			}
		}
		p, err := loadPrompt(a.SystemPrompt, a.SystemPromptText, root)
		if err != nil {
			return errorf(setting+".system_prompt", "tools: agent %s: %v", a.ID, err)
		}
		if strings.TrimSpace(p) == "" {
			return errorf(setting+".system_prompt", "tools: agent %s: a system prompt is required (system_prompt or system_prompt_text)", a.ID)
		}
		prompts[a.ID] = p
	}
	return nil
}
