module github.com/llmstream/llmstream

go 1.26
