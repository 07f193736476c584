"""Community: chat channels, leaders and their applications, posts, likes, comments, reports, follows."""
